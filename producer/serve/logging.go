package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Serve logs through log/slog. Its start-up summary, status lines and warnings are
// messages written for people; the status lines also carry their figures as attributes
// (rows_per_s, mb_per_s, ...) for a structured handler (slog.NewJSONHandler).

// NewHumanHandler is the default handler of `shmloader serve`: one line per record,
// "serve: MESSAGE" ("serve: warning: MESSAGE" at warning level and above), attributes
// left out (the message says the same for people). Safe for concurrent use.
func NewHumanHandler(w io.Writer, level slog.Leveler) slog.Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	return &humanHandler{w: w, level: level, mu: &sync.Mutex{}}
}

type humanHandler struct {
	w     io.Writer
	level slog.Leveler
	mu    *sync.Mutex
}

func (h *humanHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

func (h *humanHandler) Handle(_ context.Context, r slog.Record) error {
	prefix := "serve: "
	switch {
	case r.Level >= slog.LevelError:
		prefix = "serve: error: "
	case r.Level >= slog.LevelWarn:
		prefix = "serve: warning: "
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, prefix+r.Message+"\n")
	return err
}

func (h *humanHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *humanHandler) WithGroup(string) slog.Handler      { return h }

// logger is opt.Logger, else a human handler on opt.Log, else one that drops everything.
func (o Options) logger() *slog.Logger {
	switch {
	case o.Logger != nil:
		return o.Logger
	case o.Log != nil:
		return slog.New(NewHumanHandler(o.Log, nil))
	default:
		return slog.New(slog.DiscardHandler)
	}
}

// logf logs a formatted message; one that starts with "warning: " at warning level.
func (s *server) logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if rest, ok := strings.CutPrefix(msg, "warning: "); ok {
		s.log.Warn(rest)
		return
	}
	s.log.Info(msg)
}
