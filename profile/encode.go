package profile

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// Field bits: which fields an event type always writes, zeros included.
// Every other field is written only when it is not zero, so any Event
// survives an encode/decode round trip unchanged.
const (
	fV uint64 = 1 << iota
	fEpoch
	fBatch
	fLayer
	fStart
	fDur
	fTs
	fPeak
	fLive
	fBudget
	fPredicted
	fUsed
	fTotal
	fUtil
	fRequested
	fActual
	fMean
	fMax
	fRelErr
	fValue
	fHits
	fMisses
	fBytesH2D
)

// always returns the fields written even when zero for an event type.
func always(t string) uint64 {
	switch t {
	case TypeSpan:
		return fEpoch | fBatch | fStart | fDur
	case TypeMem:
		return fEpoch | fBatch | fPeak | fLive | fBudget | fPredicted
	case TypeMetric:
		return fEpoch | fBatch | fValue
	case TypeGPU:
		return fTs | fUsed | fTotal | fUtil
	case TypeOOM:
		return fEpoch | fBatch | fRequested | fLive | fBudget
	case TypeGuard:
		return fEpoch | fBatch | fPredicted | fActual | fBudget
	case TypeCache:
		return fEpoch | fBatch | fHits | fMisses | fBytesH2D
	case TypeStale:
		return fEpoch | fBatch | fLayer | fMean | fMax
	case TypeHistErr:
		return fEpoch | fLayer | fRelErr
	case TypeRunStart:
		return fV
	}
	return 0
}

// AppendEvent appends e as one JSON object (no trailing newline) to dst and
// returns the extended slice. It uses no reflection and does not allocate
// beyond growing dst. Fields of e's type are always written, zeros included;
// other fields only when set. Non-finite floats are written as the strings
// "NaN", "Inf" and "-Inf" (DecodeEvent reads them back). Raw JSON values
// (config, attrs, summary) are compacted onto one line; one that is not
// valid JSON is written as a JSON string.
func AppendEvent(dst []byte, e *Event) []byte {
	m := always(e.T)
	dst = append(dst, `{"t":`...)
	dst = appendString(dst, e.T)
	if m&fV != 0 || e.V != 0 {
		dst = append(dst, `,"v":`...)
		dst = strconv.AppendInt(dst, int64(e.V), 10)
	}
	dst = appendStrField(dst, `,"run":`, e.Run)
	dst = appendStrField(dst, `,"session":`, e.Session)
	dst = appendStrField(dst, `,"variant":`, e.Variant)
	dst = appendStrField(dst, `,"wall":`, e.Wall)
	dst = appendIntField(dst, 0, `,"rank":`, int64(e.Rank))
	dst = appendIntField(dst, 0, `,"world":`, int64(e.World))
	dst = appendStrField(dst, `,"node":`, e.Node)
	dst = appendIntField(dst, 0, `,"node_rank":`, int64(e.NodeRank))
	if e.Host != nil {
		dst = append(dst, `,"host":`...)
		dst = appendHost(dst, e.Host)
	}
	if e.Config != nil {
		dst = append(dst, `,"config":`...)
		dst = appendRaw(dst, e.Config)
	}
	if e.Adjusted != nil {
		dst = append(dst, `,"adjusted":[`...)
		for i, a := range e.Adjusted {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, a)
		}
		dst = append(dst, ']')
	}
	dst = appendStrField(dst, `,"name":`, e.Name)
	dst = appendStrField(dst, `,"lane":`, e.Lane)
	dst = appendIntField(dst, m&fEpoch, `,"epoch":`, int64(e.Epoch))
	dst = appendIntField(dst, m&fBatch, `,"batch":`, int64(e.Batch))
	dst = appendIntField(dst, m&fLayer, `,"layer":`, int64(e.Layer))
	dst = appendIntField(dst, m&fStart, `,"start":`, e.Start)
	dst = appendIntField(dst, m&fDur, `,"dur":`, e.Dur)
	dst = appendIntField(dst, m&fTs, `,"ts":`, e.Ts)
	dst = appendStrField(dst, `,"phase":`, e.Phase)
	dst = appendIntField(dst, m&fPeak, `,"peak":`, e.Peak)
	dst = appendIntField(dst, m&fLive, `,"live":`, e.Live)
	dst = appendIntField(dst, m&fBudget, `,"budget":`, e.Budget)
	dst = appendIntField(dst, m&fPredicted, `,"predicted":`, e.Predicted)
	dst = appendIntField(dst, m&fUsed, `,"used":`, e.Used)
	dst = appendIntField(dst, m&fTotal, `,"total":`, e.Total)
	dst = appendFloatField(dst, m&fUtil, `,"util":`, e.Util)
	dst = appendIntField(dst, m&fRequested, `,"requested":`, e.Requested)
	dst = appendStrField(dst, `,"action":`, e.Action)
	dst = appendIntField(dst, m&fActual, `,"actual":`, e.Actual)
	dst = appendIntField(dst, m&fHits, `,"hits":`, e.Hits)
	dst = appendIntField(dst, m&fMisses, `,"misses":`, e.Misses)
	dst = appendIntField(dst, m&fBytesH2D, `,"bytes_h2d":`, e.BytesH2D)
	dst = appendFloatField(dst, m&fMean, `,"mean":`, e.Mean)
	dst = appendFloatField(dst, m&fMax, `,"max":`, e.Max)
	if e.Hist != nil {
		dst = append(dst, `,"hist":[`...)
		for i, c := range e.Hist {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, c, 10)
		}
		dst = append(dst, ']')
	}
	dst = appendFloatField(dst, m&fRelErr, `,"rel_err":`, e.RelErr)
	dst = appendFloatField(dst, m&fValue, `,"value":`, e.Value)
	dst = appendStrField(dst, `,"status":`, string(e.Status))
	dst = appendStrField(dst, `,"error":`, e.Error)
	if e.Summary != nil {
		dst = append(dst, `,"summary":`...)
		dst = appendRaw(dst, e.Summary)
	}
	if e.Usage != nil {
		dst = append(dst, `,"usage":`...)
		dst = appendUsage(dst, e.Usage)
	}
	if e.Attrs != nil {
		dst = append(dst, `,"attrs":`...)
		dst = appendRaw(dst, e.Attrs)
	}
	return append(dst, '}')
}

// AppendLine appends e as one journal line: AppendEvent plus '\n'.
func AppendLine(dst []byte, e *Event) []byte {
	return append(AppendEvent(dst, e), '\n')
}

func appendStrField(dst []byte, key string, s string) []byte {
	if s == "" {
		return dst
	}
	dst = append(dst, key...)
	return appendString(dst, s)
}

func appendIntField(dst []byte, force uint64, key string, v int64) []byte {
	if force == 0 && v == 0 {
		return dst
	}
	dst = append(dst, key...)
	return strconv.AppendInt(dst, v, 10)
}

func appendFloatField(dst []byte, force uint64, key string, v float64) []byte {
	if force == 0 && v == 0 {
		return dst
	}
	dst = append(dst, key...)
	return appendFloat(dst, v)
}

// appendFloat writes the shortest representation that parses back to v, or
// "NaN", "Inf", "-Inf" as JSON strings for non-finite values.
func appendFloat(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(dst, `"Inf"`...)
	case math.IsInf(v, -1):
		return append(dst, `"-Inf"`...)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.AppendInt(dst, int64(v), 10) // common case: whole numbers
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

func appendHost(dst []byte, h *Host) []byte {
	dst = append(dst, '{')
	n := len(dst)
	dst = appendStrField(dst, `,"cpu":`, h.CPU)
	dst = appendIntField(dst, 0, `,"cores":`, int64(h.Cores))
	dst = appendStrField(dst, `,"gpu":`, h.GPU)
	dst = appendStrField(dst, `,"driver":`, h.Driver)
	dst = appendIntField(dst, 0, `,"gpu_mem":`, h.GPUMem)
	dst = appendStrField(dst, `,"gemm":`, h.Gemm)
	dst = appendStrField(dst, `,"go":`, h.Go)
	dst = appendStrField(dst, `,"os":`, h.OS)
	dst = appendStrField(dst, `,"hostname":`, h.Hostname)
	dst = appendIntField(dst, 0, `,"cpus":`, int64(h.CPUs))
	dst = appendFloatField(dst, 0, `,"load":`, h.Load)
	if len(dst) > n {
		// drop the leading comma of the first field
		copy(dst[n:], dst[n+1:])
		dst = dst[:len(dst)-1]
	}
	return append(dst, '}')
}

// appendRaw appends a raw JSON value on one line. Invalid JSON becomes a
// JSON string so the line stays parseable.
func appendRaw(dst []byte, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	if !json.Valid(raw) {
		return appendString(dst, string(raw))
	}
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(dst, raw...)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return appendString(dst, string(raw))
	}
	return append(dst, b.Bytes()...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Control characters, quotes and
// backslashes are escaped, as are U+2028 and U+2029; invalid UTF-8 becomes
// U+FFFD, as encoding/json does.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendUsage appends u as a JSON object. (It lies outside AppendEvent,
// whose keys the Python client's tests read as the order of an event's
// fields.)
func appendUsage(dst []byte, u *Usage) []byte {
	dst = append(dst, `{"cpu_s":`...)
	dst = appendFloat(dst, u.CPUS)
	dst = append(dst, `,"wait_s":`...)
	dst = appendFloat(dst, u.WaitS)
	dst = append(dst, `,"wall_s":`...)
	dst = appendFloat(dst, u.WallS)
	dst = append(dst, `,"threads":`...)
	dst = strconv.AppendInt(dst, int64(u.Threads), 10)
	dst = append(dst, `,"load":`...)
	return append(appendFloat(dst, u.Load), '}')
}
