// Package bot is Lectern's messenger bot: it pairs chats with accounts, answers
// commands and inline buttons, and delivers each paired user's scheduled
// messages in their own time zone (docs/messenger.md).
//
// The bot is a thin REST client of the API: every call made for a user carries
// SERVICE_API_KEY and X-Owner-User-Id of the chat's paired user, so the API's
// own checks (the three override guards, then the route's ownership rules)
// decide what the chat may see or change; the bot never reads product data from
// the database. It touches the database only for its pairing rows (through
// package users, their owner) and for the ledger of its scheduled deliveries
// (messenger_deliveries, owned here).
//
// The messenger itself is a plugin of the SDK's messenger kind, reached through
// messenger.Transport; the bot neither knows nor cares which messenger it is.
package bot
