package serve

import (
	"context"
	"net"
	"net/http"
)

// SetViewStarted has every view computation of h call f with its context as it starts.
func SetViewStarted(h *Handler, f func(ctx context.Context)) { h.viewStarted = f }

// SetHugeLine has h decode lines up to n bytes long, and show longer ones by their start.
func SetHugeLine(h *Handler, n int) { h.hugeLine = n }

// NewServer is the http.Server Serve runs.
func NewServer(ctx context.Context, ln net.Listener, h http.Handler, opts ServeOptions) *http.Server {
	return newServer(ctx, ln, h, opts)
}
