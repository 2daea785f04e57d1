// Package web is Lectern's web dashboard: server-rendered pages (html/template, with
// a little hand-written JavaScript on top) and the reverse proxy that forwards /api/*
// to the API.
//
// # How it talks to the API
//
// The dashboard holds no state and no sessions of its own. Every page is rendered by
// calling the API over HTTP on the browser's behalf: the dashboard forwards the
// browser's service_session cookie, names the browser's address in X-Forwarded-For,
// and passes on any cookie the API sets (sign-in, onboarding, renewal). The
// browser's own script calls /api/* through the same origin, which the dashboard
// forwards unchanged with httputil.ReverseProxy.
//
// The dashboard runs in one of two ways (docs/dashboard.md):
//
//   - standalone (`lectern dashboard --addr :3000 --api URL`): the API is reached over
//     the network. The API must list the dashboard in TRUSTED_PROXY_HOSTS so that the
//     X-Forwarded-For it sets is believed.
//   - in process (`lectern serve`): the API's handler is called directly, with the
//     browser's own address as the request's peer address, so the API sees the real
//     client without trusting any proxy. Pages and API share one address.
//
// # Files
//
// One file per page or action (onboarding.go, library.go, paper.go, ...), routes.go
// holding the dashboard's whole route table, api.go the client that calls the API,
// proxy.go and inprocess.go the two ways of reaching it, render.go the embedded
// templates and errors.go the messages people read when something fails.
//
// This package is internal to the host; its API may change with it.
package web
