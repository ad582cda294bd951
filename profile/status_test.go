package profile

import "testing"

func TestStatuses(t *testing.T) {
	seen := map[Status]bool{}
	for _, s := range Statuses() {
		if s == "" || seen[s] {
			t.Errorf("status %q empty or listed twice", s)
		}
		seen[s] = true
	}
	stopped := map[Status]bool{StatusFailed: true, StatusOOM: true, StatusCrashed: true, StatusCanceled: true, StatusPartial: true}
	timed := map[Status]bool{StatusOK: true, StatusRunning: true}
	for _, s := range Statuses() {
		if s.Stopped() != stopped[s] {
			t.Errorf("%s: Stopped() = %v", s, s.Stopped())
		}
		if s.Timed() != timed[s] {
			t.Errorf("%s: Timed() = %v", s, s.Timed())
		}
		if s.Stopped() && s.Timed() {
			t.Errorf("%s is both stopped and timed", s)
		}
	}
}
