package collector

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// MaxLine is the longest line a connection may send, in bytes (its
// newline not counted): a longer one is refused.
const MaxLine = 4 << 20

// errLineTooLong is a line over MaxLine.
var errLineTooLong = fmt.Errorf("line longer than %d MiB", MaxLine>>20)

// hello is a connection's first line.
type hello struct {
	Hello    *int   `json:"hello"`
	Token    string `json:"token"`
	Run      string `json:"run"`
	Rank     *int   `json:"rank"`
	World    int    `json:"world"`
	Node     string `json:"node"`
	NodeRank int    `json:"node_rank"`
}

// parseHello reads a hello line; the error is the reason to refuse it.
func parseHello(line []byte) (hello, error) {
	var h hello
	if err := json.Unmarshal(line, &h); err != nil || h.Hello == nil {
		return h, errors.New("the first line is not a hello")
	}
	if *h.Hello != 1 {
		return h, fmt.Errorf("hello version %d: this collector speaks 1", *h.Hello)
	}
	if h.Rank == nil {
		return h, errors.New("hello without a rank")
	}
	return h, nil
}

// Message kinds after the hello.
const (
	msgUnknown = iota // none of the keys below: skipped
	msgEvent          // {"seq":n,"ev":{…}}
	msgSync           // {"sync":T1}
	msgClock          // {"clock":{"ts","offset","delay","samples"}}
	msgBye            // {"bye":S}
)

// clockReport is a client's clock estimate.
type clockReport struct {
	Ts      int64 `json:"ts"`
	Offset  int64 `json:"offset"`
	Delay   int64 `json:"delay"`
	Samples int   `json:"samples"`
}

// message is one line after the hello; Kind says which fields are set.
type message struct {
	Kind  int
	Seq   int64
	Ev    json.RawMessage
	Sync  int64
	Clock clockReport
	Bye   int64
}

// wireMessage is message as JSON.
type wireMessage struct {
	Seq   *int64          `json:"seq"`
	Ev    json.RawMessage `json:"ev"`
	Sync  *int64          `json:"sync"`
	Clock *clockReport    `json:"clock"`
	Bye   *int64          `json:"bye"`
}

// parseMessage reads a line after the hello: an event, a clock exchange
// or report, or a bye (first of these keys present, in that order); a
// line with none of them is msgUnknown, one that is no JSON object an
// error.
func parseMessage(line []byte) (message, error) {
	var w wireMessage
	if err := json.Unmarshal(line, &w); err != nil {
		if seq, ev, ok := eventLine(line); ok {
			return message{Kind: msgEvent, Seq: seq, Ev: ev}, nil
		}
		return message{}, fmt.Errorf("malformed line: %v", err)
	}
	switch {
	case w.Seq != nil:
		if *w.Seq < 0 {
			return message{}, fmt.Errorf("negative seq %d", *w.Seq)
		}
		if len(w.Ev) == 0 || bytes.Equal(w.Ev, []byte("null")) {
			return message{}, fmt.Errorf("seq %d without an event", *w.Seq)
		}
		return message{Kind: msgEvent, Seq: *w.Seq, Ev: w.Ev}, nil
	case w.Sync != nil:
		return message{Kind: msgSync, Sync: *w.Sync}, nil
	case w.Clock != nil:
		return message{Kind: msgClock, Clock: *w.Clock}, nil
	case w.Bye != nil:
		return message{Kind: msgBye, Bye: *w.Bye}, nil
	}
	return message{Kind: msgUnknown}, nil
}

// eventLine reads an event line of the form docs/collector.md writes,
// {"seq":n,"ev":EV} with EV as is (for an event JSON refuses but the
// journal's decoder reads, with the bare NaN and Infinity of Python's
// json module).
func eventLine(line []byte) (seq int64, ev []byte, ok bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte(`{"seq":`))
	if !ok {
		return 0, nil, false
	}
	i := 0
	for i < len(rest) && i < 18 && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(string(rest[:i]), 10, 64)
	if err != nil {
		return 0, nil, false
	}
	ev, ok = bytes.CutPrefix(rest[i:], []byte(`,"ev":`))
	if !ok || len(ev) < 2 || ev[len(ev)-1] != '}' {
		return 0, nil, false
	}
	return n, ev[:len(ev)-1], true
}

// readLine returns the next line without its newline, aliasing buf (or
// r's buffer) until the next call; a line over max bytes is
// errLineTooLong, read no further. A last line without a newline is
// io.EOF's, not a line.
func readLine(r *bufio.Reader, buf *[]byte, max int) ([]byte, error) {
	*buf = (*buf)[:0]
	for {
		frag, err := r.ReadSlice('\n')
		if err == nil {
			if len(*buf) == 0 {
				if len(frag)-1 > max {
					return nil, errLineTooLong
				}
				return frag[:len(frag)-1], nil
			}
			*buf = append(*buf, frag[:len(frag)-1]...)
			if len(*buf) > max {
				return nil, errLineTooLong
			}
			return *buf, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		if len(*buf)+len(frag) > max {
			return nil, errLineTooLong
		}
		*buf = append(*buf, frag...)
	}
}

// Replies.

func welcomeLine(next int64) []byte {
	return append(strconv.AppendInt([]byte(`{"welcome":1,"next":`), next, 10), '}')
}

func refusedLine(reason string) []byte {
	b, _ := json.Marshal(struct {
		Refused string `json:"refused"`
	}{reason})
	return b
}

func syncLine(t1, t2, t3 int64) []byte {
	b := strconv.AppendInt([]byte(`{"sync":`), t1, 10)
	b = strconv.AppendInt(append(b, `,"t2":`...), t2, 10)
	return append(strconv.AppendInt(append(b, `,"t3":`...), t3, 10), '}')
}

func byeLine(n int64) []byte {
	return append(strconv.AppendInt([]byte(`{"bye":`), n, 10), '}')
}
