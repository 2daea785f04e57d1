// Package auth decides who is calling: magic-link sign-in, sessions with their grace
// window, API-key login, the ops key, the X-Owner-User-Id override with its three
// guards, source-IP trust, and the caller-identity resolvers every route declares.
//
// Handlers read the resolved identity with CallerFrom and scope every query by
// Caller.UserID.
package auth
