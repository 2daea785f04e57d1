package bot

// SetPreload turns the ledger read at the start of Tick on or off, so the
// benchmark can compare both in one run.
func SetPreload(b *Bot, on bool) { b.noPreload = !on }
