//! `GET /jobs/{id}/stream`: a job's log as Server-Sent Events. Each event's id is the line's
//! sequence number, so a browser that reconnects with `Last-Event-ID` resumes where it left off.
//! Lines come from the durable store (polled while the job runs), so the stream replays the
//! same way after the job has ended or the server restarted; an `end` event closes it. A
//! `progress` event (`done/total`) follows each change of an apply's progress, and a `state`
//! event each change of a running job's state (`queued`, `running`, `applying`).

use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::{Stream, StreamExt};
use serde::Deserialize;
use uuid::Uuid;

use super::WebState;
use crate::store::JobProgress;

/// How often a running job's log is polled for new lines.
const POLL: Duration = Duration::from_millis(300);

pub(super) fn routes() -> Router<WebState> {
    Router::new().route("/jobs/{id}/stream", get(stream))
}

#[derive(Debug, Deserialize)]
struct After {
    after: Option<i64>,
}

async fn stream(
    State(state): State<WebState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<After>,
) -> Response {
    if state.auth.session(&headers).await.is_none() {
        return (StatusCode::UNAUTHORIZED, "log in at /login first\n").into_response();
    }
    let Some(id) = super::path_id(&id) else {
        return (StatusCode::NOT_FOUND, "no such job\n").into_response();
    };
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    let after = resume.or(q.after).unwrap_or(0).max(0);
    match state.store.get_job(id).await {
        Ok(Some(_)) => Sse::new(lines(state, id, after))
            .keep_alive(KeepAlive::default())
            .into_response(),
        Ok(None) => (StatusCode::NOT_FOUND, "no such job\n").into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "log stream: store error");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "store unavailable; retry\n",
            )
                .into_response()
        }
    }
}

enum Step {
    /// Lines after `after` are still to send; `progress` is the last progress sent.
    Lines {
        after: i64,
        progress: Option<JobProgress>,
        state: Option<&'static str>,
    },
    Done,
}

/// A `progress` event: `done/total` (no id, so `Last-Event-ID` stays a log sequence number).
fn progress_event(p: JobProgress) -> Event {
    Event::default()
        .event("progress")
        .data(format!("{}/{}", p.done(), p.total()))
}

fn lines(state: WebState, id: Uuid, after: i64) -> impl Stream<Item = Result<Event, Infallible>> {
    let first = Step::Lines {
        after,
        progress: None,
        state: None,
    };
    futures::stream::unfold(first, move |step| {
        let state = state.clone();
        async move {
            let Step::Lines {
                mut after,
                mut progress,
                state: mut state_sent,
            } = step
            else {
                return None;
            };
            loop {
                // Read the state first: lines written before it ended are then all in the log.
                let (ended, now, running) = match state.store.get_job(id).await {
                    Ok(Some(job)) => (
                        job.state.is_terminal().then(|| job.state.as_str()),
                        job.progress,
                        (!job.state.is_terminal()).then(|| job.state.as_str()),
                    ),
                    Ok(None) => (Some("deleted"), None, None),
                    Err(_) => (None, progress, None),
                };
                let batch = state.store.job_log(id, after).await.unwrap_or_default();
                let mut events: Vec<Result<Event, Infallible>> = batch
                    .iter()
                    .map(|l| {
                        Ok(Event::default()
                            .id(l.seq.to_string())
                            .data(l.line.replace('\r', "")))
                    })
                    .collect();
                if let Some(p) = now.filter(|p| Some(*p) != progress) {
                    events.push(Ok(progress_event(p)));
                    progress = Some(p);
                }
                if let Some(st) = running.filter(|st| Some(*st) != state_sent) {
                    events.push(Ok(Event::default().event("state").data(st)));
                    state_sent = Some(st);
                }
                after = batch.last().map_or(after, |l| l.seq);
                if !events.is_empty() {
                    let next = Step::Lines {
                        after,
                        progress,
                        state: state_sent,
                    };
                    return Some((futures::stream::iter(events), next));
                }
                if let Some(end) = ended {
                    let last = Event::default().event("end").data(end);
                    return Some((futures::stream::iter(vec![Ok(last)]), Step::Done));
                }
                tokio::time::sleep(POLL).await;
            }
        }
    })
    .flatten()
}
