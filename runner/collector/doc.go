// Package collector receives the events of ranks on other machines over
// TCP and writes one journal per rank into a session, as a local run's
// ranks write them: the Go side of the wire protocol of
// docs/collector.md. A Collector listens on exactly the address given,
// admits the connections that present its token (random for each run),
// writes each rank's events in sequence (dropping a resend, refusing a
// gap), answers the ranks' clock exchanges from its own wall clock and
// moves each rank's run_start onto that clock by the offset the rank
// reported. Stop waits for the ranks' byes, then closes everything.
//
// Memory is bounded per connection (one line of MaxLine bytes and a
// journal writer's buffer) and in connections (MaxConns) and ranks
// (MaxRanks).
package collector
