//! Request parameters as pve-http-server collects them: query string plus a form-urlencoded or
//! JSON body, repeated keys kept (RESTHandler joins them with `,` only for `-list` formats).

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use percent_encoding::percent_decode_str;

use crate::error::{ApiError, ApiResult};

/// All parameters of one request, in the order received per key.
#[derive(Debug, Default, Clone)]
pub(crate) struct Params(pub(crate) BTreeMap<String, Vec<String>>);

impl<S: Send + Sync> FromRequest<S> for Params {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let query = req.uri().query().map(str::to_owned);
        let json = is_json(req.headers());
        let body = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::die(format!("unable to read request body - {e}")))?;
        Params::parse(query.as_deref(), json, &body)
    }
}

/// Whether the body is JSON (`Content-Type: application/json`), else form-urlencoded.
pub(crate) fn is_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/json"))
}

fn decode(text: &str) -> String {
    percent_decode_str(&text.replace('+', " "))
        .decode_utf8_lossy()
        .into_owned()
}

impl Params {
    /// The query string plus the body, as pve-http-server merges them.
    pub(crate) fn parse(query: Option<&str>, json: bool, body: &[u8]) -> ApiResult<Self> {
        let mut params = Params::default();
        if let Some(q) = query {
            params.add_urlencoded(q);
        }
        if body.is_empty() {
            return Ok(params);
        }
        if json {
            params.add_json(body)?;
        } else {
            params.add_urlencoded(&String::from_utf8_lossy(body));
        }
        Ok(params)
    }

    fn add_urlencoded(&mut self, text: &str) {
        for pair in text.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            self.0.entry(decode(k)).or_default().push(decode(v));
        }
    }

    fn add_json(&mut self, body: &[u8]) -> ApiResult<()> {
        let value: serde_json::Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::die(format!("unable to parse JSON body - {e}")))?;
        let serde_json::Value::Object(obj) = value else {
            return Err(ApiError::die(
                "unable to parse JSON body - expected an object",
            ));
        };
        for (k, v) in obj {
            let values = match v {
                serde_json::Value::Array(items) => items.iter().map(scalar).collect(),
                other => vec![scalar(&other)],
            };
            self.0.entry(k).or_default().extend(values);
        }
        Ok(())
    }

    /// A single-valued parameter; a repeated one is a type error, as in PVE.
    pub(crate) fn get(&self, key: &str) -> ApiResult<Option<&str>> {
        match self.0.get(key).map(Vec::as_slice) {
            None | Some([]) => Ok(None),
            Some([one]) => Ok(Some(one.as_str())),
            Some(_) => Err(ApiError::param(
                key,
                "type check ('string') failed - got ARRAY",
            )),
        }
    }

    /// A `-list` parameter (`delete`, `revert`): repeated values joined, then split.
    pub(crate) fn list(&self, key: &str) -> Vec<String> {
        self.0
            .get(key)
            .map(|vs| crate::propstr::split_list(&vs.join(",")))
            .unwrap_or_default()
    }

    /// A boolean parameter (`1`/`0`, also `true`/`false` from JSON).
    pub(crate) fn flag(&self, key: &str) -> ApiResult<bool> {
        match self.get(key)? {
            None | Some("0") => Ok(false),
            Some("1") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(ApiError::param(
                key,
                format!("type check ('boolean') failed - got '{v}'"),
            )),
        }
    }

    /// An integer parameter.
    pub(crate) fn int(&self, key: &str) -> ApiResult<Option<u64>> {
        match self.get(key)? {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                ApiError::param(key, format!("type check ('integer') failed - got '{v}'"))
            }),
        }
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }
}

fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Bool(b) => if *b { "1" } else { "0" }.to_owned(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}
