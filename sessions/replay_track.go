package sessions

import (
	"fmt"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// replayTrack is one run's events and a cursor over them: the events are
// either in memory (a Track given to NewReplay) or in the run's journals
// (its ranks' merged, see runReader), decoded as they are reached. The cursor holds the track's next event
// (head), so merging the tracks needs nothing per event.
type replayTrack struct {
	run    string
	offset time.Duration
	n      int             // events in the track
	evs    []profile.Event // the events, for a track in memory
	js     []RankJournal   // the journals, for a track on disk
	sizes  []int64         // bytes of each journal that hold the n events

	rr *runReader // the open journals (nil until needed, and once read)

	read   int           // events read so far, head included
	prev   int64         // EventTime of the last event read
	head   profile.Event // the next event to deliver, if has
	headAt time.Duration // head's place on the timeline
	has    bool
}

// rewind moves the cursor back to the first event.
func (tr *replayTrack) rewind() {
	tr.read, tr.prev, tr.has, tr.head = 0, 0, false, profile.Event{}
	if tr.rr != nil {
		if err := tr.rr.reset(); err != nil {
			tr.close() // readNext opens the journals again
		}
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
	if tr.rr == nil {
		rr, err := openRunReader(tr.js, tr.sizes)
		if err != nil {
			return fmt.Errorf("replay %s: %w", tr.run, err)
		}
		tr.rr = rr
		// skip what was read before the journals were closed
		for range tr.read {
			if err := tr.decode(); err != nil {
				return err
			}
		}
	}
	return tr.decode()
}

// decode decodes the next event of the open journals into head.
func (tr *replayTrack) decode() error {
	ok, err := tr.rr.next(&tr.head)
	if err != nil {
		return fmt.Errorf("replay %s: %w", tr.run, err)
	}
	if !ok {
		return fmt.Errorf("replay %s: journal %s has %d events, %d when the replay opened it: it was replaced", tr.run, tr.js[0].Path, tr.rr.stats().Events, tr.n)
	}
	return nil
}

// close closes the journals, if open.
func (tr *replayTrack) close() error {
	if tr.rr == nil {
		return nil
	}
	err := tr.rr.close()
	tr.rr = nil
	if err != nil {
		return fmt.Errorf("replay %s: %w", tr.run, err)
	}
	return nil
}
