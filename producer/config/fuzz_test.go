package config

import (
	"bytes"
	"testing"
)

// FuzzParse: no input makes Parse, or what runs on its result, panic or hang.
func FuzzParse(f *testing.F) {
	f.Add([]byte(DefaultYAML))
	for _, tc := range parseErrors {
		f.Add([]byte(tc.yaml))
	}
	f.Add([]byte("outputs: {a: {columns: x, transforms: &t [log1p, *t]}}\n"))
	names := schema()
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.yaml")
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			return
		}
		_ = c.Validate()
		_, _ = c.ExpandOutputs(names)
		if !bytes.Equal(c.HashInput(), c.HashInput()) {
			t.Fatal("HashInput is not stable")
		}
	})
}
