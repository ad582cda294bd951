// Package memory is the engine's memory guard toolkit: byte sizes as users
// write them ("512MiB", "2GiB", "0.1G"; parsed by profile/units), an online least-squares predictor of
// a batch's peak device bytes from its shape, edge cutting by a degree rule
// (drop edges until a block fits a budget, keeping as many as possible), and
// the host's resident set size.
//
// Peak measurement itself lives with the allocator (device.Scope): the
// trainer runs each step through a scoped view of the device, so a batch's
// peak is exact even while sampler workers and an overlapped evaluator
// allocate on the same device.
package memory
