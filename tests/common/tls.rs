//! `TlsFront`: HTTPS in front of the test server, with a certificate signed
//! by a throwaway CA that no trust store knows, as a company CA would be. It
//! terminates TLS on `127.0.0.1:<free port>` and pipes the bytes to the
//! plain-http upstream, so every command works over it unchanged. Tests point
//! `--ca-cert` (or the system store, through `SSL_CERT_FILE`) at [`TlsFront::ca_file`].

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{crypto::ring, ServerConfig};

/// An HTTPS front for one upstream; stops when dropped.
pub struct TlsFront {
    addr: SocketAddr,
    ca_file: PathBuf,
    _dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TlsFront {
    /// Starts a front for `upstream` (`http://host:port`). Panics on failure.
    pub fn start(upstream: &str) -> TlsFront {
        let parsed = url::Url::parse(upstream).expect("TlsFront: upstream url");
        let upstream_addr = format!(
            "{}:{}",
            parsed.host_str().expect("TlsFront: upstream host"),
            parsed.port_or_known_default().unwrap_or(80)
        );

        let ca_key = KeyPair::generate().expect("CA key");
        let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "estx-tui test CA");
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_cert = ca.self_signed(&ca_key).expect("CA certificate");

        let leaf_key = KeyPair::generate().expect("server key");
        let mut leaf = CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()])
            .expect("server params");
        leaf.distinguished_name
            .push(DnType::CommonName, "localhost");
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let leaf_cert = leaf
            .signed_by(&leaf_key, &ca_cert, &ca_key)
            .expect("server certificate");

        let dir = tempfile::tempdir().expect("TlsFront: tempdir");
        let ca_file = dir.path().join("company-ca.pem");
        std::fs::write(&ca_file, ca_cert.pem()).expect("TlsFront: write CA");

        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
        let config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(vec![leaf_cert.der().clone()], key)
            .expect("TLS server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));

        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("TlsFront: bind");
        listener
            .set_nonblocking(true)
            .expect("TlsFront: nonblocking");
        let addr = listener.local_addr().expect("TlsFront: local addr");
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("TlsFront: runtime");
            rt.block_on(async move {
                let listener =
                    tokio::net::TcpListener::from_std(listener).expect("TlsFront: listener");
                loop {
                    tokio::select! {
                        _ = &mut stopped => return,
                        accepted = listener.accept() => {
                            let Ok((tcp, _)) = accepted else { continue };
                            let acceptor = acceptor.clone();
                            let upstream_addr = upstream_addr.clone();
                            tokio::spawn(async move {
                                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                                let Ok(mut up) = tokio::net::TcpStream::connect(upstream_addr).await
                                else {
                                    return;
                                };
                                let _ = tokio::io::copy_bidirectional(&mut tls, &mut up).await;
                            });
                        }
                    }
                }
            });
        });
        TlsFront {
            addr,
            ca_file,
            _dir: dir,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `https://127.0.0.1:<port>`: the certificate names this address.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The PEM file of the CA that signed the front's certificate.
    pub fn ca_file(&self) -> &Path {
        &self.ca_file
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
