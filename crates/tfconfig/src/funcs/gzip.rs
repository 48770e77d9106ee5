//! `base64gzip`: a string gzipped as Terraform's Go writes it (`gzip.NewWriter`, `Write`,
//! `Flush`, `Close`), then base64-encoded.
//!
//! The frame is Go's byte for byte: a header with no name, time 0, XFL 0 and OS 255; the
//! compressed data ended by the flush's empty stored block; the close's final empty stored
//! block; CRC-32 and length. The compressed blocks themselves come from miniz_oxide at Go's
//! default level, which encodes short text as Go's compress/flate does but may choose other
//! matches and Huffman tables for longer text (the oracle's cases say where).

use base64::Engine as _;
use miniz_oxide::deflate::core::{
    CompressorOxide, TDEFLFlush, TDEFLStatus, compress_to_output, create_comp_flags_from_zip_params,
};

use super::{FnError, FnResult, fits, string_arg};
use crate::value::Value;

/// gzip magic, DEFLATE, no flags, modification time 0, XFL 0, OS 255 ("unknown"), as Go
/// writes a header with nothing set.
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// What Go's `Flush` ends the data with: an empty, non-final stored block.
const SYNC_BLOCK: [u8; 5] = [0, 0, 0, 0xff, 0xff];

/// What Go's `Close` adds after a flush: an empty, final stored block.
const FINAL_BLOCK: [u8; 5] = [1, 0, 0, 0xff, 0xff];

/// compress/flate's `DefaultCompression`.
const LEVEL: i32 = 6;

pub(super) fn call(name: &str, args: &[Value], room: u64) -> Option<FnResult> {
    (name == "base64gzip").then(|| {
        let text = string_arg(args, 0)?;
        // Stored blocks bound the deflated size near the input's; base64 adds a third.
        fits(
            (text.len() as u64).saturating_mul(2).saturating_add(64),
            room,
        )?;
        let gz = gzip(text.as_bytes())?;
        Ok(Value::String(
            base64::engine::general_purpose::STANDARD.encode(gz),
        ))
    })
}

fn gzip(data: &[u8]) -> Result<Vec<u8>, FnError> {
    let mut out = HEADER.to_vec();
    if data.is_empty() {
        // Go's flush of nothing is the stored block alone.
        out.extend_from_slice(&SYNC_BLOCK);
    } else {
        // Negative window bits: raw DEFLATE, no zlib header.
        let flags = create_comp_flags_from_zip_params(LEVEL, -15, 0);
        let mut compressor = CompressorOxide::new(flags);
        let (status, _) = compress_to_output(&mut compressor, data, TDEFLFlush::Sync, |chunk| {
            out.extend_from_slice(chunk);
            true
        });
        if status != TDEFLStatus::Okay {
            return Err(FnError::Call(format!(
                "failed to write gzip raw data: {status:?}"
            )));
        }
    }
    out.extend_from_slice(&FINAL_BLOCK);
    out.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    // ISIZE is the length modulo 2^32.
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{HEADER, gzip};

    #[test]
    fn gzipped_text_inflates_back_with_its_checksum_and_length() {
        let long = "line of text\n".repeat(5_000);
        for text in ["", "a", "héllo ✓", "abcabcabcabcabc", long.as_str()] {
            let gz = gzip(text.as_bytes()).expect("gzip");
            assert_eq!(gz[..10], HEADER);
            let (body, trailer) = gz[10..].split_at(gz.len() - 18);
            let inflated = miniz_oxide::inflate::decompress_to_vec(body).expect("raw DEFLATE");
            assert_eq!(inflated, text.as_bytes());
            assert_eq!(trailer[..4], crc32fast::hash(text.as_bytes()).to_le_bytes());
            assert_eq!(trailer[4..], (text.len() as u32).to_le_bytes());
        }
    }
}
