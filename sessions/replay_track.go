package sessions

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// replayTrack is one run's events and a cursor over them: the events are
// either in memory (a Track given to NewReplay) or in a journal file,
// decoded as they are reached. The cursor holds the track's next event
// (head), so merging the tracks needs nothing per event.
type replayTrack struct {
	run    string
	offset time.Duration
	n      int             // events in the track
	evs    []profile.Event // the events, for a track in memory
	path   string          // the journal, for a track on disk
	size   int64           // bytes of the journal that hold the n events

	f  *os.File       // the open journal (nil until needed, and once read)
	jr *journalReader // reads f up to size

	read   int           // events read so far, head included
	prev   int64         // EventTime of the last event read
	head   profile.Event // the next event to deliver, if has
	headAt time.Duration // head's place on the timeline
	has    bool
}

// rewind moves the cursor back to the first event.
func (tr *replayTrack) rewind() {
	tr.read, tr.prev, tr.has, tr.head = 0, 0, false, profile.Event{}
	if tr.f != nil {
		tr.jr.reset(io.NewSectionReader(tr.f, 0, tr.size))
	}
}

// fill reads the track's next event into head, if it has one left.
func (tr *replayTrack) fill() error {
	if tr.has || tr.read >= tr.n {
		return nil
	}
	if tr.evs != nil {
		tr.head = tr.evs[tr.read]
	} else if err := tr.readNext(); err != nil {
		return err
	}
	tr.read++
	tr.prev = EventTime(&tr.head, tr.prev)
	tr.headAt = tr.offset + time.Duration(tr.prev)
	tr.has = true
	if tr.read == tr.n {
		return tr.close() // all read: the journal is no longer needed
	}
	return nil
}

// readNext decodes the journal's next event into head, opening the
// journal (again) where needed.
func (tr *replayTrack) readNext() error {
	if tr.f == nil {
		f, err := os.Open(tr.path)
		if err != nil {
			return fmt.Errorf("replay %s: %w", tr.run, err)
		}
		tr.f = f
		// skip what was read before the file was closed
		sr := io.NewSectionReader(f, 0, tr.size)
		if tr.jr == nil {
			tr.jr = newJournalReader(sr)
		} else {
			tr.jr.reset(sr)
		}
		for range tr.read {
			if err := tr.decode(); err != nil {
				return err
			}
		}
	}
	return tr.decode()
}

// decode decodes the next event of the open journal into head.
func (tr *replayTrack) decode() error {
	ok, err := tr.jr.next(&tr.head)
	if err != nil {
		return fmt.Errorf("replay %s: %s: %w", tr.run, tr.path, err)
	}
	if !ok {
		return fmt.Errorf("replay %s: journal %s has %d events, %d when the replay opened it: it was replaced", tr.run, tr.path, tr.jr.st.Events, tr.n)
	}
	return nil
}

// close closes the journal file, if open.
func (tr *replayTrack) close() error {
	if tr.f == nil {
		return nil
	}
	err := tr.f.Close()
	tr.f = nil
	if err != nil {
		return fmt.Errorf("replay %s: %w", tr.run, err)
	}
	return nil
}
