package kineto

import "encoding/json"

// The decoder has checked an event's syntax before UnmarshalJSON sees
// its bytes, so the fields are found by a plain walk over them: no
// reflection, nothing copied but the values kept (the hot path of a
// trace of millions of events).

// UnmarshalJSON picks an event's fields out of a JSON object; any other
// value leaves the event empty (skipped by the conversion).
func (re *rawEvent) UnmarshalJSON(b []byte) error {
	*re = rawEvent{}
	return eachField(b, func(key, val []byte) {
		switch string(key) {
		case "ph":
			re.Ph = val
		case "cat":
			re.Cat = val
		case "name":
			re.Name = val
		case "pid":
			re.Pid = val
		case "tid":
			re.Tid = val
		case "ts":
			re.Ts = val
		case "dur":
			re.Dur = val
		case "id":
			re.ID = val
		case "bp":
			re.BP = val
		case "args":
			a := &rawArgs{}
			if eachField(val, a.field) == nil && len(val) > 0 && val[0] == '{' {
				re.Args = a
			}
		}
	})
}

// field keeps one of the arguments the conversion reads.
func (a *rawArgs) field(key, val []byte) {
	switch string(key) {
	case "External id":
		a.External = val
	case "correlation":
		a.Correlation = val
	case "device":
		a.Device = val
	case "stream":
		a.Stream = val
	case "Device Type":
		a.DevType = val
	case "Device Id":
		a.DevID = val
	case "Total Allocated":
		a.Allocated = val
	case "Total Reserved":
		a.Reserved = val
	}
}

// eachField calls fn with each key (its raw text, unquoted but not
// unescaped) and value of a JSON object, in order; b must be valid
// JSON. A value that is not an object has no fields.
func eachField(b []byte, fn func(key, val []byte)) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] == '}' {
			return nil
		}
		if b[i] == ',' {
			i++
			continue
		}
		ke := endOfString(b, i)
		key := b[min(i+1, ke):max(ke-1, i+1)]
		i = skipSpace(b, ke)
		if i < len(b) && b[i] == ':' {
			i++
		}
		i = skipSpace(b, i)
		ve := endOfValue(b, i)
		fn(key, json.RawMessage(b[i:ve]))
		i = ve
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// endOfString returns the index after the string that starts at b[i].
func endOfString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// endOfValue returns the index after the value that starts at b[i].
func endOfValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return endOfString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = endOfString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}
