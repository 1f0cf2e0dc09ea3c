package tinypi

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// This file is chapter 13's proxy: a model's stream relayed through an HTTP server, for a
// program that must not hold the provider's key itself. The server answers POST /api/stream
// with server-sent events, one JSON object per event, and leaves out what the deltas already
// carried: a terminal event has no content, a toolcall_end no arguments. ProxyModel, the client,
// rebuilds the message from the deltas, so that what it returns is the message the model
// returned. Where upstream's client waits for ever on a stream that stops, ProxyModel never
// waits longer than its idle timeout for the next event.

// ProxyStreamPath is the one path the proxy serves.
const ProxyStreamPath = "/api/stream"

// MaxProxyRequestBytes bounds the body of a request to the proxy: a whole conversation, so it
// is large (a 200,000-token context is about 1 MB of JSON), but a body that never ends must not
// fill the server's memory.
const MaxProxyRequestBytes = 8 << 20

// DefaultProxyWriteTimeout bounds the write of one event when ProxyServerOptions.WriteTimeout is
// 0: a client that stops reading fills its connection's buffers, and then a write waits for it.
const DefaultProxyWriteTimeout = 30 * time.Second

// ProxyServerOptions configures NewProxyHandler.
type ProxyServerOptions struct {
	// Token is the bearer token every request must carry. It must not be empty.
	Token string
	// WriteTimeout bounds the write of each event; 0 means DefaultProxyWriteTimeout. When it
	// passes (the client stopped reading), the handler returns and the model's stream is
	// cancelled.
	WriteTimeout time.Duration
}

// NewProxyServer returns an http.Server for handler (NewProxyHandler's) on addr, with the
// timeouts a server that faces other programs needs: ReadHeaderTimeout and ReadTimeout bound
// the request (a client that sends its headers or body byte by byte, or never ends a chunked
// body, is cut off), IdleTimeout closes a kept-alive connection nobody uses, and MaxHeaderBytes
// bounds the headers. It has no WriteTimeout, which would bound a whole stream: the handler
// bounds each event's write instead, and clears the read deadline once the body is read, so
// that a long answer outlives ReadTimeout.
func NewProxyServer(addr string, handler http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// NewProxyHandler returns the proxy's HTTP handler: POST /api/stream with
// "Authorization: Bearer TOKEN" and a JSON request, answered with the model's events as
// server-sent events, flushed one by one. It refuses, before the model is asked:
//
//   - another path (404) or method (405);
//   - a Host that is not a loopback name or address (403): a page on another site cannot reach
//     the proxy through a DNS name that resolves to 127.0.0.1;
//   - a missing or wrong token (401);
//   - a body over MaxProxyRequestBytes (413) or that does not decode (400).
//
// A refusal before the body is read closes the connection without reading the body: a wrong
// token with a body that never ends gets its 401 at once. Every response forbids framing and
// sniffing. The model's stream is cancelled when the client goes away, and when one event
// cannot be written within the write timeout (a client that stopped reading).
func NewProxyHandler(model Model, opts ProxyServerOptions) (http.Handler, error) {
	if model == nil {
		return nil, errors.New("tinypi: NewProxyHandler: no model")
	}
	if opts.Token == "" {
		return nil, errors.New("tinypi: NewProxyHandler: the token is empty")
	}
	writeTimeout := opts.WriteTimeout
	if writeTimeout <= 0 {
		writeTimeout = DefaultProxyWriteTimeout
	}
	return &proxyHandler{model: model, token: []byte(opts.Token), writeTimeout: writeTimeout}, nil
}

type proxyHandler struct {
	model        Model
	token        []byte
	writeTimeout time.Duration
}

func (h *proxyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	//lab:begin 13.6
	hdr := w.Header()
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Content-Security-Policy", "frame-ancestors 'none'")
	hdr.Set("X-Content-Type-Options", "nosniff")
	// Until the body is decoded, every answer is a refusal: the connection closes after it, and
	// net/http does not read the body first.
	hdr.Set("Connection", "close")
	if r.URL.Path != ProxyStreamPath {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		hdr.Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: use POST", http.StatusMethodNotAllowed)
		return
	}
	if !loopbackHost(r.Host) {
		http.Error(w, "forbidden: the proxy answers only to a loopback host name", http.StatusForbidden)
		return
	}
	if !h.authorized(r.Header.Get("Authorization")) {
		hdr.Set("WWW-Authenticate", `Bearer realm="tinypi"`)
		http.Error(w, "unauthorized: a wrong or missing bearer token", http.StatusUnauthorized)
		return
	}
	req, status, err := decodeProxyRequest(w, r)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	hdr.Del("Connection")
	flusher, _ := w.(http.Flusher)
	rc := http.NewResponseController(w)
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	stream := h.model.Stream(r.Context(), req)
	var buf bytes.Buffer
	for e := range stream.All() {
		buf.Reset()
		data, err := json.Marshal(wireEvent(e))
		if err != nil {
			return // cannot happen: every field is a string, a number or a Usage
		}
		buf.WriteString("data: ")
		buf.Write(data)
		buf.WriteString("\n\n")
		rc.SetWriteDeadline(time.Now().Add(h.writeTimeout))
		if _, err := w.Write(buf.Bytes()); err != nil {
			return // the client went away; r.Context() is cancelled, and with it the model
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	//lab:stub
	//	_, _, _, _ = h.authorized, loopbackHost, decodeProxyRequest, h.writeTimeout
	//	http.Error(w, LAB_PENDING, http.StatusNotImplemented)
	//lab:end
}

// authorized reports whether header is "Bearer TOKEN" with the handler's token, comparing in
// constant time.
func (h *proxyHandler) authorized(header string) bool {
	got, ok := strings.CutPrefix(header, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), h.token) == 1
}

// loopbackHost reports whether the Host header names this machine's loopback: localhost, or a
// loopback IP address, with any port.
func loopbackHost(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// decodeProxyRequest reads the request body, at most MaxProxyRequestBytes of it. Once it is
// read, the connection's read deadline (a server's ReadTimeout, NewProxyServer) is cleared: it
// bounds the request, and must not end the stream that answers it.
func decodeProxyRequest(w http.ResponseWriter, r *http.Request) (Request, int, error) {
	body := http.MaxBytesReader(w, r.Body, MaxProxyRequestBytes)
	var pr proxyRequest
	err := json.NewDecoder(body).Decode(&pr)
	if err == nil {
		http.NewResponseController(w).SetReadDeadline(time.Time{})
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return Request{}, http.StatusRequestEntityTooLarge, fmt.Errorf("request body over %d bytes", tooBig.Limit)
		}
		return Request{}, http.StatusBadRequest, fmt.Errorf("request body is not a proxy request: %v", err)
	}
	req := Request{SystemPrompt: pr.SystemPrompt, Tools: pr.Tools}
	for i, raw := range pr.Messages {
		m, err := UnmarshalMessage(raw)
		if err != nil {
			return Request{}, http.StatusBadRequest, fmt.Errorf("message %d: %v", i, err)
		}
		req.Messages = append(req.Messages, m)
	}
	return req, 0, nil
}
