//! `atoll demo --exit` plays its whole script (plan, approve, apply, then a PR on the
//! protected guest that must be blocked) and returns Ok; it fails if any step does not happen.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_script_plays_to_the_end_and_blocks_the_protected_guest() {
    atoll::runner::demo::run(true).await.expect("demo script");
}
