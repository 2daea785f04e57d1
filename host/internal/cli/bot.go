package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/app"
	"github.com/lectern-research/lectern/host/internal/bot"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/pluginhost"
	"github.com/lectern-research/lectern/host/internal/userconfig"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// runBot implements `lectern bot [--api URL]`: the messenger bot as its own
// process, calling the API at --api (default BOT_API_URL) for each paired user.
// It needs DATABASE_URL (the database lectern serve uses: the bot keeps its
// pairing rows and delivery ledger there), SERVICE_API_KEY and
// SERVICE_CONFIG_KEY (the bot token is sealed), and an enabled messenger plugin
// in LECTERN_PLUGINS_FILE.
func runBot(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	fs := newFlagSet("bot", stderr)
	api := fs.String("api", "", "base URL of the API (default: BOT_API_URL, else http://127.0.0.1:3001)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg := loadConfig(env, stderr)
	if cfg == nil {
		return 1
	}
	if *api == "" {
		*api = cfg.BotAPIURL
	}
	apiURL, err := url.Parse(*api)
	if err != nil || (apiURL.Scheme != "http" && apiURL.Scheme != "https") || apiURL.Host == "" {
		fmt.Fprintf(stderr, "lectern: --api / BOT_API_URL: %q must be an absolute http or https URL, such as http://127.0.0.1:3001\n", *api)
		return 2
	}
	if !cfg.DatabaseURL.IsSet() {
		fmt.Fprintln(stderr, "lectern: lectern bot needs DATABASE_URL, the database lectern serve uses (or let lectern serve run the bot itself)")
		return 2
	}
	log := newLogger(cfg, stderr)
	if err := runBotProcess(ctx, cfg, apiURL, log, stdout); err != nil {
		fmt.Fprintf(stderr, "lectern: %s\n", oneLine(err.Error()))
		return 1
	}
	return 0
}

func runBotProcess(ctx context.Context, cfg *config.Config, apiURL *url.URL, log *slog.Logger, stdout io.Writer) error {
	db, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	entries, err := pluginhost.LoadFile(cfg.PluginsFile)
	if err != nil {
		return err
	}
	var messengers []pluginhost.Entry
	for _, e := range entries {
		if e.Kind == protocol.KindMessenger {
			messengers = append(messengers, e)
		}
	}
	host := pluginhost.New(messengers, pluginhost.Options{Logger: log, LogLevel: strings.ToLower(cfg.LogLevel.String()),
		Store: pluginhost.NewStore(db.Pool)})
	defer host.Close()
	if err := host.Start(ctx); err != nil {
		return fmt.Errorf("plugins: %w", err)
	}
	b, err := newBot(cfg, db.Pool, host, apiURL, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Lectern bot running, calling %s\n", apiURL.String())
	return b.Run(ctx)
}

// errNoMessenger means no messenger plugin is enabled: there is no bot to run.
var errNoMessenger = errors.New("no messenger plugin is enabled in the plugins file")

// newBot builds the bot over the first enabled messenger plugin of host, calling
// the API at apiURL with the ops key.
func newBot(cfg *config.Config, pool *pgxpool.Pool, host *pluginhost.Host, apiURL *url.URL, log *slog.Logger) (*bot.Bot, error) {
	if host == nil {
		return nil, errNoMessenger
	}
	name := ""
	for _, st := range host.Status() {
		if st.Kind == protocol.KindMessenger && st.Enabled {
			name = st.Name
			break
		}
	}
	if name == "" {
		return nil, errNoMessenger
	}
	if !cfg.ServiceAPIKey.IsSet() {
		return nil, errors.New("the messenger bot needs SERVICE_API_KEY: it calls the API as each paired user with it")
	}
	transport, err := host.Messenger(name)
	if err != nil {
		return nil, err
	}
	settings, err := app.SettingsStore(cfg, pool)
	if err != nil {
		return nil, err
	}
	return bot.New(bot.Config{
		Pool:      pool,
		Transport: transport,
		API:       bot.NewClient(apiURL, cfg.ServiceAPIKey.Value(), nil),
		CredentialsFunc: func(ctx context.Context) (map[string]string, error) {
			tok, err := settings.SystemSecret(ctx, userconfig.KeyMessengerBotToken)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", userconfig.KeyMessengerBotToken, err)
			}
			return map[string]string{"bot_token": tok}, nil
		},
		OwnerChatFunc: func(ctx context.Context) (string, error) { return ownerChat(ctx, settings) },
		DashboardURL:  cfg.PublicBaseURL,
		Logger:        log.With("component", "bot", "messenger", name),
	})
}

// ownerChat reads messenger.owner_chat_id, a string or a number; "" when unset.
func ownerChat(ctx context.Context, settings *userconfig.Store) (string, error) {
	raw, err := settings.SystemValue(ctx, userconfig.KeyMessengerOwnerChat)
	if errors.Is(err, userconfig.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", userconfig.KeyMessengerOwnerChat, err)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s), nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), nil
	}
	return "", fmt.Errorf("%s must be a chat id (a string or a number)", userconfig.KeyMessengerOwnerChat)
}

// startBot runs the bot of lectern serve in the background when a messenger
// plugin is enabled, calling the API on apiURL (serve's own listener); it
// returns at once. Without a messenger plugin it does nothing; a bot that cannot
// be built is logged and the API serves on without it.
func startBot(ctx context.Context, host *app.App, apiURL *url.URL, log *slog.Logger) {
	b, err := newBot(host.Config, host.Pool, host.Plugins, apiURL, log)
	if errors.Is(err, errNoMessenger) {
		return
	}
	if err != nil {
		log.Error("the messenger bot is not running", "error", err)
		return
	}
	go func() {
		if err := b.Run(ctx); err != nil {
			log.Error("the messenger bot stopped", "error", err)
		}
	}()
	log.Info("messenger bot running", "api", apiURL.String())
}
