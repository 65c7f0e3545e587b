//! The user's browser in the authorization-code tests (Z4, Z5): it opens the authorization
//! URL and follows the authorization server's redirects, keeping its cookies, until one leads
//! to the redirect URI, whose full URL it returns (as a real browser would deliver it to the
//! application's callback).
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;

use reqwest::Url;

/// Follows redirects from `start` until one goes to `redirect_uri`: that URL. At most 20.
pub async fn follow(start: &str, redirect_uri: &str) -> Result<String, String> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let mut cookies: BTreeMap<String, String> = BTreeMap::new();
    let mut url = Url::parse(start).map_err(|e| format!("{start}: {e}"))?;
    for _ in 0..20 {
        let jar: Vec<String> = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let response = (client.get(url.clone()))
            .header("cookie", jar.join("; "))
            .send()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        for set in response.headers().get_all("set-cookie") {
            let set = set.to_str().unwrap_or_default();
            let pair = set.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                if value.is_empty() {
                    cookies.remove(name.trim());
                } else {
                    cookies.insert(name.trim().to_owned(), value.to_owned());
                }
            }
        }
        if !response.status().is_redirection() {
            let status = response.status();
            let body = response.text().await.unwrap_or_default();
            // The page's message, not its markup.
            let body = body.split("<body>").last().unwrap_or_default();
            return Err(format!("{url} answered {status}: {body:.400}"));
        }
        let location = (response.headers().get("location"))
            .and_then(|l| l.to_str().ok())
            .ok_or_else(|| format!("{url} redirects nowhere"))?;
        url = url.join(location).map_err(|e| format!("{location}: {e}"))?;
        if url.as_str().starts_with(redirect_uri) {
            return Ok(url.to_string());
        }
    }
    Err("more than 20 redirects".to_owned())
}
