package mail

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeRelay is a minimal SMTP server on loopback that records one message.
func fakeRelay(t *testing.T) (port int, got <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	out := make(chan string, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r, w := bufio.NewReader(conn), conn
		say := func(s string) { _, _ = w.Write([]byte(s + "\r\n")) }
		say("220 fake ESMTP")
		var data strings.Builder
		inData := false
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if inData {
				if line == ".\r\n" {
					inData = false
					out <- data.String()
					say("250 queued")
					continue
				}
				data.WriteString(line)
				continue
			}
			switch cmd := strings.ToUpper(strings.TrimSpace(line)); {
			case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
				say("250 fake")
			case strings.HasPrefix(cmd, "DATA"):
				inData = true
				say("354 go on")
			case strings.HasPrefix(cmd, "QUIT"):
				say("221 bye")
				return
			default:
				say("250 ok")
			}
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, out
}

func TestSMTPRefusesAPrivateRelayAtSendTime(t *testing.T) {
	t.Parallel()
	s := &SMTP{Host: "127.0.0.1", Port: 25, From: "lectern@example.org"}
	err := s.Send(context.Background(), Message{To: "ann@example.org", Subject: "x", Body: "y"})
	require.ErrorContains(t, err, "loopback")
}

func TestSMTPSends(t *testing.T) {
	t.Parallel()
	port, got := fakeRelay(t)
	s := &SMTP{Host: "127.0.0.1", Port: port, From: "lectern@example.org", FromName: "Lectern",
		ReplyTo: "help@example.org", AllowPrivateHost: true}
	err := s.Send(context.Background(), Message{To: "ann@example.org", Subject: "Your sign-in link", Body: "line one\nline two"})
	require.NoError(t, err)
	msg := <-got
	require.Contains(t, msg, "From: \"Lectern\" <lectern@example.org>\r\n")
	require.Contains(t, msg, "To: <ann@example.org>\r\n")
	require.Contains(t, msg, "Reply-To: help@example.org\r\n")
	require.Contains(t, msg, "Subject: Your sign-in link\r\n")
	require.Contains(t, msg, "\r\n\r\nline one\r\nline two")
}
