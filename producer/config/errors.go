package config

import (
	"regexp"
	"strconv"
	"strings"
)

// Error is a problem with one value of a config: where it is and what is wrong.
// Its text reads "file:line: key.path: message", the parts that are unknown left out.
type Error struct {
	File string // config file; "" when the value did not come from a file (a flag, code)
	Line int    // 1-based line in File; 0 when unknown
	Path string // key path, e.g. "outputs.features.transforms[1].normalize"; "" for the file itself
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// yamlLine matches the syntax errors of go.yaml.in/yaml/v3, whose line we move to the
// front so that every error of this package reads the same way.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns an error of the YAML parser into an *Error of file.
func syntaxError(file string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Err: plainError("YAML syntax: " + m[2])}
	}
	return &Error{File: file, Err: plainError("YAML syntax: " + strings.TrimPrefix(msg, "yaml: "))}
}

type plainError string

func (e plainError) Error() string { return string(e) }
