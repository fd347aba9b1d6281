// Package adversary is the Byzantine side of a run, kept out of every
// honest code path and used unchanged by every driver: who is Byzantine
// (Choose, the one function that computes the set), and what the
// Byzantine nodes send instead of what their honest node code made
// (Adversary.Rewrite): vectors crafted by an attack (package attack),
// topology claims and edge events rewritten by a topology liar, forger,
// replayer or flooder (ClaimAttack), a privacy layer's messages passed as
// made, everything renumbered and signed with the Byzantine node's own key.
//
// Byzantine nodes run the honest node code (they train, so attacks that
// start from the attacker's own honest vector have one); the driver hands
// each phase's outbox to the adversary before sending it. The simulator
// holds every Byzantine key and hands every node's outbox: the attack's
// View then holds the round's honest payloads of the same tag, in
// sender-id order (the omniscient adversary). A node process holds its
// own key and hands only its own outbox (Alone): the View holds no honest
// payload, so only attacks that need none run there (CheckLocal). Each
// crafted message comes from the attack's stream for (seed, sender, round,
// recipient), or (seed, sender, round) with Config.SameForAll, so both
// drivers craft the same bits.
//
// A crafted vector can therefore be made at any time, in any order: the
// simulator asks for a phase's messages unmade (RewriteLazy), each with
// the header, number, tag and length Rewrite gives it, and makes each one
// when its receiver takes it (Lazy.Make), into a buffer of the worker
// delivering to that receiver, so it holds a few vectors per worker
// (HeldPerWorker) instead of one per Byzantine sender and link. Choices:
//   - Every attack runs lazily. Concurrent Makes share the round's View,
//     which computes each statistic once under its own lock; attacks are
//     safe for concurrent use.
//   - A history-using attack (attack.UsesPrevious) has its views settled
//     when the phase closes (Lazy.Close), after every Make. Its crafts may
//     leave in the view what the next round reads (adaptive_receiver's
//     estimate for each receiver), so Close crafts, and drops, every
//     message no receiver asked for (dropped links), and the history is
//     the one Rewrite leaves.
//   - SameForAll's one vector per sender and tag is crafted by the first
//     Make that needs it and shared until Close (HeldShared).
//   - A node process keeps Rewrite (Alone, RewriteOne): it sends what it
//     crafts at once.
//
// Asynchronous timing has no round: the simulator hands each Byzantine
// node's outbox to RewriteAt at the node's own step, with every honest
// node's last sent vectors as the view (async.go), and Stale makes the
// coalition resend an old step's vectors under fresh numbers.
package adversary
