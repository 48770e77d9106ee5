//! AWS Signature Version 4 for one request without a body (S3's GetObject), written on `hmac`
//! and `sha2` rather than an AWS SDK: the whole algorithm is the canonical request, the string
//! to sign and four HMACs. Tested against AWS's published test vectors (`get-vanilla` and
//! friends, and S3's GetObject example).

use hmac::{Hmac, Mac as _};
use secrecy::{ExposeSecret as _, SecretString};
use sha2::{Digest as _, Sha256};

/// SHA-256 of the empty payload, as `x-amz-content-sha256` names it for a GET.
pub const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The key pair a request is signed with.
#[derive(Debug)]
pub struct Credentials<'a> {
    pub access_key_id: &'a str,
    pub secret_access_key: &'a SecretString,
}

/// What is signed: the method, the path as sent (already URI-encoded), the query pairs
/// (unencoded), and the headers (every one is signed; `host` and `x-amz-date` among them).
#[derive(Debug)]
pub struct Request<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a [(&'a str, &'a str)],
    pub headers: &'a [(&'a str, &'a str)],
    pub payload_sha256: &'a str,
}

/// Where and when: `20150830T123600Z`, `us-east-1`, `s3`.
#[derive(Debug)]
pub struct Scope<'a> {
    pub amz_date: &'a str,
    pub region: &'a str,
    pub service: &'a str,
}

/// RFC 3986 encoding as SigV4 wants it: unreserved characters kept, everything else `%XX`
/// (upper case); `/` kept when `keep_slash` (an S3 object key in a path).
pub fn uri_encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char);
            }
            b'/' if keep_slash => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC-SHA256 accepts a key of any length: this cannot fail.
    let mut mac = <Hmac<Sha256>>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// The canonical request (the first step of SigV4), and the signed header names.
pub fn canonical_request(req: &Request<'_>) -> (String, String) {
    let mut query: Vec<(String, String)> = req
        .query
        .iter()
        .map(|(k, v)| (uri_encode(k, false), uri_encode(v, false)))
        .collect();
    query.sort();
    let query = query
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let mut headers: Vec<(String, String)> = req
        .headers
        .iter()
        .map(|(k, v)| {
            let value = v.split_whitespace().collect::<Vec<_>>().join(" ");
            (k.to_ascii_lowercase(), value)
        })
        .collect();
    headers.sort();
    let canonical_headers: String = headers.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let signed = headers
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let text = format!(
        "{}\n{}\n{query}\n{canonical_headers}\n{signed}\n{}",
        req.method, req.path, req.payload_sha256
    );
    (text, signed)
}

/// The string to sign for a canonical request.
pub fn string_to_sign(canonical: &str, scope: &Scope<'_>) -> String {
    format!(
        "AWS4-HMAC-SHA256\n{}\n{}/{}/{}/aws4_request\n{}",
        scope.amz_date,
        &scope.amz_date[..8.min(scope.amz_date.len())],
        scope.region,
        scope.service,
        sha256_hex(canonical.as_bytes())
    )
}

/// The `Authorization` header's value for `req`.
pub fn authorization(req: &Request<'_>, creds: &Credentials<'_>, scope: &Scope<'_>) -> String {
    let (canonical, signed) = canonical_request(req);
    let to_sign = string_to_sign(&canonical, scope);
    let date = &scope.amz_date[..8.min(scope.amz_date.len())];
    let secret = format!("AWS4{}", creds.secret_access_key.expose_secret());
    let k_date = hmac(secret.as_bytes(), date.as_bytes());
    let k_region = hmac(&k_date, scope.region.as_bytes());
    let k_service = hmac(&k_region, scope.service.as_bytes());
    let k_signing = hmac(&k_service, b"aws4_request");
    let signature = hex::encode(hmac(&k_signing, to_sign.as_bytes()));
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{date}/{}/{}/aws4_request, SignedHeaders={signed}, \
         Signature={signature}",
        creds.access_key_id, scope.region, scope.service
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The credentials of AWS's SigV4 test suite (aws-sig-v4-test-suite).
    const SUITE_KEY: &str = "AKIDEXAMPLE";
    const SUITE_SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    const SUITE_DATE: &str = "20150830T123600Z";

    fn suite(path: &str, query: &[(&str, &str)]) -> (String, String, String) {
        let secret = SecretString::from(SUITE_SECRET);
        let creds = Credentials {
            access_key_id: SUITE_KEY,
            secret_access_key: &secret,
        };
        let headers = [
            ("Host", "example.amazonaws.com"),
            ("X-Amz-Date", SUITE_DATE),
        ];
        let req = Request {
            method: "GET",
            path,
            query,
            headers: &headers,
            payload_sha256: EMPTY_SHA256,
        };
        let scope = Scope {
            amz_date: SUITE_DATE,
            region: "us-east-1",
            service: "service",
        };
        let (canonical, _) = canonical_request(&req);
        let sts = string_to_sign(&canonical, &scope);
        (canonical, sts, authorization(&req, &creds, &scope))
    }

    #[test]
    fn get_vanilla_signs_as_the_aws_test_suite_says() {
        let (canonical, sts, auth) = suite("/", &[]);
        assert_eq!(
            canonical,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n\
             host;x-amz-date\n\
             e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sts,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n\
             bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63"
        );
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date, \
             Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        );
    }

    #[test]
    fn get_vanilla_query_order_key_case_sorts_the_query() {
        let (canonical, _, auth) = suite("/", &[("Param2", "value2"), ("Param1", "value1")]);
        assert!(
            canonical.starts_with("GET\n/\nParam1=value1&Param2=value2\n"),
            "{canonical}"
        );
        assert!(
            auth.ends_with(
                "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"
            ),
            "{auth}"
        );
    }

    /// S3's documented GetObject example (Signature Version 4, "Example: GET Object").
    #[test]
    fn s3_get_object_example_signs_as_the_s3_documentation_says() {
        let secret = SecretString::from("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
        let creds = Credentials {
            access_key_id: "AKIAIOSFODNN7EXAMPLE",
            secret_access_key: &secret,
        };
        let headers = [
            ("Host", "examplebucket.s3.amazonaws.com"),
            ("Range", "bytes=0-9"),
            ("x-amz-content-sha256", EMPTY_SHA256),
            ("x-amz-date", "20130524T000000Z"),
        ];
        let req = Request {
            method: "GET",
            path: "/test.txt",
            query: &[],
            headers: &headers,
            payload_sha256: EMPTY_SHA256,
        };
        let scope = Scope {
            amz_date: "20130524T000000Z",
            region: "us-east-1",
            service: "s3",
        };
        assert_eq!(
            authorization(&req, &creds, &scope),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    #[test]
    fn keys_are_encoded_as_s3_wants_them() {
        assert_eq!(
            uri_encode("env:/prod/a b+c~.tfstate", true),
            "env%3A/prod/a%20b%2Bc~.tfstate"
        );
        assert_eq!(uri_encode("a/b", false), "a%2Fb");
    }
}
