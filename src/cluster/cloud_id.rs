//! Elastic Cloud IDs (`--cloud-id`, profile `cloud_id`) decoded into the
//! deployment's Elasticsearch URL, as Elastic's own clients do.
//!
//! A Cloud ID is `<label>:<base64>`; the label (the deployment's name) is
//! only for people. The base64 part decodes to `<host>$<es_uuid>$<kibana_uuid>`
//! (the Kibana part may be missing), where the host may end in `:<port>`
//! (443 otherwise); Elasticsearch is at `https://<es_uuid>.<host>:<port>`.
//! References: Elastic's "Configure Beats and Logstash with Cloud ID"
//! (the `cloud.id` setting) and `parse_cloud_id` in elastic-transport-python
//! (`elastic_transport/client_utils.py`), which this follows: split at the
//! first `:`, host port after the last `:` of the host part.

use crate::error::{Error, Result};
use base64::Engine;

/// The https URL of the Elasticsearch deployment a Cloud ID names.
pub fn cloud_id_url(cloud_id: &str) -> Result<url::Url> {
    let invalid = |why: &str| Error::Invalid(format!("invalid --cloud-id: {why}"));
    let cloud_id = cloud_id.trim();
    // The label is optional for Elastic's clients too (a bare base64 value).
    let encoded = cloud_id.split_once(':').map_or(cloud_id, |(_, rest)| rest);
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| invalid("the part after `<label>:` is not base64 (copy the whole Cloud ID from the deployment's page)"))?;
    let decoded = String::from_utf8(decoded).map_err(|_| invalid("it does not decode to text"))?;
    let mut parts = decoded.split('$');
    let host = parts.next().unwrap_or_default().trim();
    let es_uuid = parts.next().map(str::trim).unwrap_or_default();
    if host.is_empty() || es_uuid.is_empty() {
        return Err(invalid(
            "it decodes to no `<host>$<elasticsearch id>` (is it a Cloud ID?)",
        ));
    }
    let (host, port) = match host.rsplit_once(':') {
        Some((h, p)) => {
            let port = p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| invalid(&format!("`{p}` is not a port")))?;
            (h, port)
        }
        None => (host, 443),
    };
    let url = format!("https://{es_uuid}.{host}:{port}");
    url::Url::parse(&url).map_err(|e| invalid(&format!("it names `{url}`, not a URL: {e}")))
}

#[cfg(test)]
mod tests {
    use crate::cluster::cloud_id::*;

    fn b64(text: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(text)
    }

    #[test]
    fn elastic_published_example_decodes() {
        // The example in Elastic's Beats docs ("Configure the output for
        // Elastic Cloud", `cloud.id`).
        let id = "staging:dXMtZWFzdC0xLmF3cy5mb3VuZC5pbyRjZWM2ZjI2MWE3NGJmMjRjZTMzYmI4ODExYjg0Mjk0ZiRjNmMyY2E2ZDA0MjI0OWFmMGNjN2Q3YTllOTYyNTc0Mw==";
        let url = cloud_id_url(id).unwrap();
        assert_eq!(
            url.as_str(),
            "https://cec6f261a74bf24ce33bb8811b84294f.us-east-1.aws.found.io/"
        );
        assert_eq!(url.port_or_known_default(), Some(443));
    }

    #[test]
    fn a_port_on_the_host_is_kept() {
        let id = format!(
            "cluster:{}",
            b64("westeurope.azure.elastic-cloud.com:9243$e83a9c0b$f0e1d2c3")
        );
        let url = cloud_id_url(&id).unwrap();
        assert_eq!(
            url.as_str(),
            "https://e83a9c0b.westeurope.azure.elastic-cloud.com:9243/"
        );
        // No Kibana part, no label: still Elasticsearch's URL.
        let url = cloud_id_url(&b64("gcp.cloud.es.io$abc")).unwrap();
        assert_eq!(url.as_str(), "https://abc.gcp.cloud.es.io/");
    }

    #[test]
    fn malformed_ids_are_refused_with_the_reason() {
        for (id, why) in [
            ("name:not base64!", "not base64"),
            (&format!("n:{}", b64("only-a-host")) as &str, "<host>$"),
            (&format!("n:{}", b64("h.io:99999$abc$def")), "not a port"),
            (&format!("n:{}", b64("$abc$def")), "<host>$"),
        ] {
            let e = cloud_id_url(id).unwrap_err().to_string();
            assert!(e.contains("--cloud-id") && e.contains(why), "{id}: {e}");
        }
    }
}
