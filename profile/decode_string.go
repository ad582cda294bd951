package profile

import (
	"unicode/utf16"
	"unicode/utf8"
)

// str parses a JSON string (or null as ""). Well-known names are returned
// as constants without allocating.
func (d *decoder) str() (string, error) {
	if d.null() {
		return "", nil
	}
	if d.peek() != '"' {
		return "", d.errf("expected a string")
	}
	start := d.i + 1
	j := start
	for ; j < len(d.b); j++ {
		c := d.b[j]
		if c == '"' {
			d.i = j + 1
			return intern(d.b[start:j]), nil
		}
		if c == '\\' {
			break
		}
	}
	if j >= len(d.b) {
		return "", d.errf("unterminated string")
	}
	// slow path: escapes
	buf := append(d.buf[:0], d.b[start:j]...)
	for j < len(d.b) {
		c := d.b[j]
		switch {
		case c == '"':
			d.i = j + 1
			d.buf = buf
			return string(buf), nil
		case c != '\\':
			buf = append(buf, c)
			j++
			continue
		}
		if j+1 >= len(d.b) {
			break
		}
		esc := d.b[j+1]
		j += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(d.b, j)
			if !ok {
				d.i = j
				return "", d.errf("bad \\u escape")
			}
			j += 4
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(-1), false
				if j+6 <= len(d.b) && d.b[j] == '\\' && d.b[j+1] == 'u' {
					r2, ok2 = hex4(d.b, j+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					r = dec
					j += 6
				} else {
					r = utf8.RuneError
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			d.i = j - 1
			return "", d.errf("bad escape \\%c", esc)
		}
	}
	d.i = len(d.b)
	return "", d.errf("unterminated string")
}

func hex4(b []byte, j int) (rune, bool) {
	if j+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[j : j+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// intern returns constant strings for the names every journal repeats, so
// decoding a span usually allocates nothing for its name and lane.
func intern(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case TypeSpan:
		return TypeSpan
	case TypeMem:
		return TypeMem
	case TypeMetric:
		return TypeMetric
	case TypeGPU:
		return TypeGPU
	case TypeStale:
		return TypeStale
	case TypeOOM:
		return TypeOOM
	case TypeHistErr:
		return TypeHistErr
	case TypeRunStart:
		return TypeRunStart
	case TypeRunEnd:
		return TypeRunEnd
	case StageSample:
		return StageSample
	case StageTransfer:
		return StageTransfer
	case StageTrain:
		return StageTrain
	case StageForward:
		return StageForward
	case StageBackward:
		return StageBackward
	case StageStep:
		return StageStep
	case StageEval:
		return StageEval
	case StageHistoryPull:
		return StageHistoryPull
	case StageHistoryPush:
		return StageHistoryPush
	case StageCache: // also TypeCache
		return StageCache
	case StageGuard: // also TypeGuard
		return StageGuard
	case StageWait:
		return StageWait
	case LaneCompute:
		return LaneCompute
	case LaneCopy:
		return LaneCopy
	case "loss":
		return "loss"
	case "val_acc":
		return "val_acc"
	case "val_loss":
		return "val_loss"
	case "test_acc":
		return "test_acc"
	case "train_acc":
		return "train_acc"
	case "lr":
		return "lr"
	}
	if len(b) > 8 && string(b[:8]) == "sampler/" {
		n := 0
		for _, c := range b[8:] {
			if c < '0' || c > '9' || n > len(samplerLanes) {
				return string(b)
			}
			n = n*10 + int(c-'0')
		}
		if n < len(samplerLanes) && (b[8] != '0' || len(b) == 9) {
			return samplerLanes[n]
		}
	}
	return string(b)
}

// strs decodes an array of strings (null: nil).
func (d *decoder) strs() ([]string, error) { return array(d, d.str) }
