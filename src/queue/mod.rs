//! Durable jobs: enqueue, claim with a lease, heartbeat, reaper, states. Knows nothing of what a
//! job does.
