package sessionlist

import (
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/fsnotify/fsnotify"
)

// WatchPoll is how often the list looks at the sessions folder's
// modification time where the platform cannot notify it of changes.
const WatchPoll = 500 * time.Millisecond

// WatchFallback is how often the list looks at the sessions folder's
// modification time where the platform notifies changes: a file system
// that accepts the watch yet sends nothing (a network one, written from
// another host) still shows new sessions within this time. One stat per
// look: an idle list costs nothing measurable.
const WatchFallback = 10 * time.Second

// changedMsg says that the sessions folder changed: a session was
// created, imported or deleted, possibly from another shell.
type changedMsg struct{}

// watcher reports changes to the store's sessions folder, through
// fsnotify where the platform has it (with a slow look at the folder's
// modification time besides, see WatchFallback) and by polling that
// time elsewhere. Changes coalesce: at most one waits.
type watcher struct {
	changed chan struct{}
	done    chan struct{}
	once    sync.Once
	fs      *fsnotify.Watcher // nil: polling
}

// newWatcher starts watching dir.
func newWatcher(dir string) *watcher { return watchEvery(dir, WatchFallback) }

// watchEvery starts watching dir, looking at its modification time every
// fallback besides where fsnotify works.
func watchEvery(dir string, fallback time.Duration) *watcher {
	w := &watcher{changed: make(chan struct{}, 1), done: make(chan struct{})}
	if fw, err := fsnotify.NewWatcher(); err == nil {
		if err := fw.Add(dir); err == nil {
			w.fs = fw
			go w.notify()
			go w.poll(dir, fallback)
			return w
		}
		fw.Close()
	}
	go w.poll(dir, WatchPoll)
	return w
}

// signal records a change without blocking.
func (w *watcher) signal() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *watcher) notify() {
	for {
		select {
		case _, ok := <-w.fs.Events:
			if !ok {
				return
			}
			w.signal()
		case _, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			w.signal() // an overflow: look again
		case <-w.done:
			return
		}
	}
}

// poll signals a change of dir's modification time, looking every
// interval, until the watcher closes.
func (w *watcher) poll(dir string, every time.Duration) {
	mtime := func() time.Time {
		if fi, err := os.Stat(dir); err == nil {
			return fi.ModTime()
		}
		return time.Time{}
	}
	last := mtime()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if m := mtime(); !m.Equal(last) {
				last = m
				w.signal()
			}
		case <-w.done:
			return
		}
	}
}

// wait is a command that returns changedMsg at the next change, or nil
// once the watcher is closed.
func (w *watcher) wait() tea.Msg {
	select {
	case <-w.changed:
		return changedMsg{}
	case <-w.done:
		return nil
	}
}

// close stops the watcher; a wait under way returns nil.
func (w *watcher) close() {
	w.once.Do(func() {
		close(w.done)
		if w.fs != nil {
			w.fs.Close()
		}
	})
}
