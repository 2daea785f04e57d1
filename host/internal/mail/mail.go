// Package mail sends the host's email (magic links, invitations) through SMTP, or,
// with DEV_SMTP_LOG_ONLY, writes it to the log instead.
package mail

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/mail"
	"net/smtp"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/netguard"
)

// ErrNotConfigured means neither SMTP nor DEV_SMTP_LOG_ONLY is set up.
var ErrNotConfigured = errors.New("mail: SMTP is not configured (set SMTP_HOST, or DEV_SMTP_LOG_ONLY for development)")

// Message is one plain-text email.
type Message struct {
	To      string
	Subject string
	Body    string
	// LogFields are added to the log line when mail goes to the log
	// (DEV_SMTP_LOG_ONLY), e.g. {"magic_link": url}.
	LogFields map[string]string
}

// Sender sends a message.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// New returns the sender the configuration asks for: the log with DEV_SMTP_LOG_ONLY,
// SMTP when SMTP_HOST is set, otherwise a sender that fails with ErrNotConfigured.
func New(cfg *config.Config, log *slog.Logger) Sender {
	switch {
	case cfg.DevSMTPLogOnly:
		return logSender{log: log}
	case cfg.SMTPConfigured():
		from := cfg.SMTPFrom
		if from == "" {
			from = cfg.SMTPUser
		}
		return &SMTP{
			Host: cfg.SMTPHost, Port: cfg.SMTPPort, User: cfg.SMTPUser, Pass: cfg.SMTPPass.Value(),
			From: from, FromName: cfg.SMTPFromName, ReplyTo: cfg.SMTPReplyTo,
			AllowPrivateHost: cfg.AllowPrivateSMTPHost,
		}
	}
	return notConfigured{}
}

type notConfigured struct{}

func (notConfigured) Send(context.Context, Message) error { return ErrNotConfigured }

type logSender struct{ log *slog.Logger }

func (s logSender) Send(ctx context.Context, m Message) error {
	attrs := []any{"to", m.To, "subject", m.Subject}
	for k, v := range m.LogFields {
		attrs = append(attrs, k, v)
	}
	s.log.InfoContext(ctx, "email (DEV_SMTP_LOG_ONLY: not sent)", attrs...)
	return nil
}

// SMTP sends through a relay: implicit TLS on port 465, STARTTLS elsewhere when the
// server offers it (and always when credentials are sent, which net/smtp enforces).
type SMTP struct {
	Host, User, Pass, From, FromName, ReplyTo string
	Port                                      int
	// AllowPrivateHost is ALLOW_PRIVATE_SMTP_HOST: without it a relay that resolves
	// to a private, loopback, link-local or reserved address is refused at send time.
	AllowPrivateHost bool
	// Resolver looks up Host; nil means the system resolver.
	Resolver netguard.Resolver
}

// Send delivers m, checking the relay's addresses first.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	if err := netguard.CheckHost(ctx, s.Resolver, s.Host, s.AllowPrivateHost); err != nil {
		return fmt.Errorf("mail: SMTP_HOST refused: %w", err)
	}
	if _, err := mail.ParseAddress(m.To); err != nil {
		return fmt.Errorf("mail: bad recipient: %w", err)
	}
	addr := net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d := &net.Dialer{}
	var conn net.Conn
	var err error
	if s.Port == 465 {
		conn, err = (&tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: s.Host}}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return fmt.Errorf("mail: connect %s: %w", addr, err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	c, err := smtp.NewClient(conn, s.Host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("mail: %w", err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok && s.Port != 465 {
		if err := c.StartTLS(&tls.Config{ServerName: s.Host}); err != nil {
			return fmt.Errorf("mail: starttls: %w", err)
		}
	}
	if s.User != "" {
		if err := c.Auth(smtp.PlainAuth("", s.User, s.Pass, s.Host)); err != nil {
			return fmt.Errorf("mail: auth: %w", err)
		}
	}
	if err := c.Mail(s.From); err != nil {
		return fmt.Errorf("mail: MAIL FROM: %w", err)
	}
	if err := c.Rcpt(m.To); err != nil {
		return fmt.Errorf("mail: RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("mail: DATA: %w", err)
	}
	if _, err := w.Write(s.compose(m)); err != nil {
		return fmt.Errorf("mail: write: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("mail: send: %w", err)
	}
	return c.Quit()
}

func (s *SMTP) compose(m Message) []byte {
	from := (&mail.Address{Name: s.FromName, Address: s.From}).String()
	var b strings.Builder
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", from)
	header("To", (&mail.Address{Address: m.To}).String())
	if s.ReplyTo != "" {
		header("Reply-To", s.ReplyTo)
	}
	header("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	header("Date", time.Now().UTC().Format(time.RFC1123Z))
	header("Message-ID", "<"+randomID()+"@"+s.Host+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "8bit")
	b.WriteString("\r\n")
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(m.Body, "\r\n", "\n"), "\n", "\r\n"))
	return []byte(b.String())
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
