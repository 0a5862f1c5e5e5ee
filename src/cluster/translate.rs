//! The schema map's interface as the cluster layer sees it: the protocol
//! (`protocol::schema::Boundary`) implements [`Translate`], the handle holds
//! one, and `boundary` applies it to every document on its way in and out.

use serde_json::{Map, Value};
use std::fmt::Debug;

/// Renames the documents of some indices between the application's names
/// (on the cluster) and the names the tool reads (in memory).
pub trait Translate: Debug + Send + Sync {
    /// A document of `index` as read.
    fn read(&self, index: &str, src: Map<String, Value>) -> Map<String, Value>;
    /// A document of `index` as it is to be written.
    fn write(&self, index: &str, src: &Map<String, Value>) -> Map<String, Value>;
    /// [`Translate::read`] on every hit's `_source` of a search answer.
    fn read_answer(&self, index: &str, answer: &mut Value);
}
