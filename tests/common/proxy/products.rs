//! The product personalities the [`super::FaultProxy`] can play, and
//! [`TABLE`]: the single list of their differences from osmem-server, one
//! row per difference, the personalities it applies to, and the upstream
//! reference (documentation, source path or issue) it was written from.
//! `personality` applies the rows to the traffic; it has no product
//! knowledge of its own.

use serde_json::{json, Value};

/// A product and version the proxy can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Personality {
    /// Elasticsearch 7.17 (self-managed).
    Elasticsearch717,
    /// Elasticsearch 8.x (self-managed or Elastic Cloud Hosted).
    Elasticsearch8,
    /// Elasticsearch 9.x before elastic/elasticsearch#157382 (no `Date`).
    Elasticsearch9,
    /// Elasticsearch 9.x with elastic/elasticsearch#157382 (sends `Date`).
    Elasticsearch9Dated,
    /// Elasticsearch Serverless (Elastic Cloud).
    ElasticsearchServerless,
    /// OpenSearch 2.11.
    OpenSearch2,
    /// OpenSearch 3.3.
    OpenSearch3,
    /// OpenSearch 3.0 to 3.2: point-in-time, but no `_shard_doc` yet.
    OpenSearch32,
    /// Amazon OpenSearch Service, OpenSearch 2.11 engine.
    AwsOpenSearch2,
    /// Amazon OpenSearch Service, OpenSearch 2.11 engine, with
    /// `rest.action.multi.allow_explicit_index: false` (what AWS advises
    /// for index-level access policies).
    AwsOpenSearch2ExplicitIndexRefused,
    /// Elasticsearch 8.x, the user's role granted on the alias names only
    /// (a point-in-time search is authorised on the concrete indices).
    Elasticsearch8AliasOnlyRole,
    /// Amazon OpenSearch Service, OpenSearch 2.11 engine, with fine-grained
    /// access control (the OpenSearch security plugin: every request
    /// authenticated, permissions by action name).
    AwsOpenSearch2Fgac,
}

use Personality::*;

/// One way a product answers differently from osmem-server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Difference {
    /// REST answers carry no `Date` header.
    NoDateHeader,
    /// Answers carry `X-Elastic-Product: Elasticsearch`.
    ElasticProductHeader,
    /// Point-in-time is `POST /{index}/_pit` / `DELETE /_pit` (`id`).
    ElasticsearchPit,
    /// Point-in-time is `POST /{index}/_search/point_in_time` /
    /// `DELETE /_search/point_in_time` (`pit_id`).
    OpenSearchPit,
    /// `_shard_doc` is no sort field: every shard fails "No mapping found
    /// for [_shard_doc] in order to sort on".
    ShardDocUnknown,
    /// `_cluster/health` answers 410 `api_not_available_exception`.
    NoClusterHealth,
    /// `refresh_interval` is not an index setting (not shown, not settable).
    NoRefreshIntervalSetting,
    /// `number_of_shards` is not shown in an index's settings (the service
    /// shards indices itself).
    NoShardCountSetting,
    /// Request bodies over 10 MiB are refused with 413.
    BodyLimit10MiB,
    /// Request bodies over 100 MB (`http.max_content_length`) are refused with 413.
    BodyLimit100Mb,
    /// Security is on, with the OpenSearch security plugin's answers: 401
    /// without credentials, 403 `security_exception` "no permissions for
    /// [action] and User [name=.., backend_roles=[..], requestedTenant=..]"
    /// for an action no role mapped to the user grants (the tests give the
    /// realm: [`FaultProxy::secure`]).
    FineGrainedAccessControl,
    /// `rest.action.multi.allow_explicit_index: false`: a `_bulk`,
    /// `_msearch` or `_mget` whose body names an index (`_index` in an
    /// action or a document, `index` in a search header), even the one in
    /// the path, is refused whole with 400 `illegal_argument_exception`
    /// "explicit index in bulk|multi search|multi get is not allowed",
    /// nothing of it run.
    ExplicitIndexRefused,
    /// The role is granted on the alias names the tool is given, not on
    /// the concrete indices behind them: a search with a point-in-time
    /// (which names no index: the point-in-time holds the concrete ones)
    /// is refused 403 `security_exception` "action
    /// [indices:data/read/search] is unauthorized"; opening it through the
    /// alias and every other request pass.
    AliasOnlyRole,
}

use Difference::*;

/// One row of [`TABLE`].
pub struct Row {
    /// The difference.
    pub difference: Difference,
    /// The personalities that have it.
    pub products: &'static [Personality],
    /// Where upstream says so.
    pub reference: &'static str,
}

const ALL_ES: &[Personality] = &[
    Elasticsearch717,
    Elasticsearch8,
    Elasticsearch8AliasOnlyRole,
    Elasticsearch9,
    Elasticsearch9Dated,
    ElasticsearchServerless,
];
const ALL_OS: &[Personality] = &[
    OpenSearch2,
    OpenSearch3,
    OpenSearch32,
    AwsOpenSearch2,
    AwsOpenSearch2ExplicitIndexRefused,
    AwsOpenSearch2Fgac,
];

/// Every difference, with the products that have it and the reference.
pub const TABLE: &[Row] = &[
    Row {
        difference: NoDateHeader,
        products: &[
            Elasticsearch717,
            Elasticsearch8,
            Elasticsearch8AliasOnlyRole,
            Elasticsearch9,
            ElasticsearchServerless,
            OpenSearch2,
            OpenSearch3,
            OpenSearch32,
            AwsOpenSearch2,
            AwsOpenSearch2ExplicitIndexRefused,
            AwsOpenSearch2Fgac,
        ],
        reference: "elastic/elasticsearch#157382 (adds Date to REST answers); \
            server/src/main/java/org/elasticsearch/http/DefaultRestChannel.java and \
            opensearch-project/OpenSearch server/src/main/java/org/opensearch/http/DefaultRestChannel.java \
            set no Date",
    },
    Row {
        difference: ElasticProductHeader,
        products: ALL_ES,
        reference: "elastic/elasticsearch#74365 (X-Elastic-Product on every answer from 7.14); \
            OpenSearch never sends it",
    },
    Row {
        difference: ElasticsearchPit,
        products: ALL_ES,
        reference: "https://www.elastic.co/guide/en/elasticsearch/reference/8.19/point-in-time-api.html \
            (POST /<index>/_pit, answer `id`; DELETE /_pit {\"id\"}); 7.10+",
    },
    Row {
        difference: OpenSearchPit,
        products: ALL_OS,
        reference: "https://docs.opensearch.org/latest/search-plugins/searching-data/point-in-time-api/ \
            (POST /<index>/_search/point_in_time, answer `pit_id`; \
            DELETE /_search/point_in_time {\"pit_id\": [..]}); 2.4+",
    },
    Row {
        difference: ShardDocUnknown,
        products: &[
            OpenSearch2,
            OpenSearch32,
            AwsOpenSearch2,
            AwsOpenSearch2ExplicitIndexRefused,
            AwsOpenSearch2Fgac,
        ],
        reference: "opensearch-project/OpenSearch#17064, PR #18924: `_shard_doc` sorts only from 3.3.0 \
            (3.0 to 3.2 have point-in-time and still refuse it); \
            before, FieldSortBuilder finds no field: query_shard_exception \
            \"No mapping found for [_shard_doc] in order to sort on\" on every shard",
    },
    Row {
        difference: NoClusterHealth,
        products: &[ElasticsearchServerless],
        reference: "https://www.elastic.co/docs/reference/elasticsearch/rest-apis/compatibility \
            (serverless API differences: cluster APIs unavailable); \
            elastic/elasticsearch server/src/main/java/org/elasticsearch/rest/RestController.java \
            (ApiNotAvailableException, 410)",
    },
    Row {
        difference: NoRefreshIntervalSetting,
        products: &[ElasticsearchServerless],
        reference: "https://www.elastic.co/docs/deploy-manage/deploy/elastic-cloud/differences-from-other-elasticsearch-offerings \
            (index settings: refresh_interval is managed; searches see writes within 5 s)",
    },
    Row {
        difference: NoShardCountSetting,
        products: &[ElasticsearchServerless],
        reference: "https://www.elastic.co/docs/deploy-manage/deploy/elastic-cloud/differences-from-other-elasticsearch-offerings \
            (\"shard distribution and replication\" are managed; settings are restricted to a subset) and \
            https://www.elastic.co/docs/reference/elasticsearch/index-settings/index-modules \
            (index.number_of_shards carries no Serverless badge): modelled as not shown, so the \
            tool cannot rely on it",
    },
    Row {
        difference: BodyLimit10MiB,
        products: &[
            AwsOpenSearch2,
            AwsOpenSearch2ExplicitIndexRefused,
            AwsOpenSearch2Fgac,
        ],
        reference: "https://docs.aws.amazon.com/opensearch-service/latest/developerguide/limits.html#network-limits \
            (maximum HTTP request payload 10 MiB on small/medium/large instance types)",
    },
    Row {
        difference: BodyLimit100Mb,
        products: &[
            Elasticsearch717,
            Elasticsearch8,
            Elasticsearch8AliasOnlyRole,
            Elasticsearch9,
            Elasticsearch9Dated,
            OpenSearch2,
            OpenSearch3,
            OpenSearch32,
        ],
        reference: "http.max_content_length default 100mb: \
            https://www.elastic.co/guide/en/elasticsearch/reference/8.19/modules-network.html, \
            https://docs.opensearch.org/latest/install-and-configure/configuring-opensearch/network-settings/",
    },
    Row {
        difference: FineGrainedAccessControl,
        products: &[AwsOpenSearch2Fgac],
        reference: "https://docs.aws.amazon.com/opensearch-service/latest/developerguide/fgac.html \
            (fine-grained access control is the OpenSearch security plugin: roles, role mapping to \
            users and backend roles such as IAM ARNs); the 403 text is \
            opensearch-project/security SecurityFilter.java (\"no permissions for %s and %s\", the \
            missing actions and User.toString(): \"User [name=.., backend_roles=[..], \
            requestedTenant=..]\"); https://repost.aws/knowledge-center/opensearch-fgac-errors \
            (\"security_exception\",\"reason\":\"no permissions\" 403: map the user or backend \
            role to a role)",
    },
    Row {
        difference: ExplicitIndexRefused,
        products: &[AwsOpenSearch2ExplicitIndexRefused],
        reference: "opensearch-project/OpenSearch server/src/main/java/org/opensearch/action/bulk/\
            BulkRequestParser.java (`_index` in an action: IllegalArgumentException \"explicit index \
            in bulk is not allowed\"), action/search/MultiSearchRequest.java (`index`/`indices` in a \
            header: \"explicit index in multi search is not allowed\"), action/get/\
            MultiGetRequest.java (`_index` in `docs`: \"explicit index in multi get is not \
            allowed\"), each when rest.action.multi.allow_explicit_index (BaseRestHandler.\
            MULTI_ALLOW_EXPLICIT_INDEX) is false; thrown while parsing, so nothing runs, answered \
            400 illegal_argument_exception; https://docs.aws.amazon.com/opensearch-service/latest/\
            developerguide/ac.html#ac-advanced (\"rest.action.multi.allow_explicit_index\": \
            \"false\" to keep index-level policies from being bypassed)",
    },
    Row {
        difference: AliasOnlyRole,
        products: &[Elasticsearch8AliasOnlyRole],
        reference: "https://www.elastic.co/guide/en/elasticsearch/reference/8.19/point-in-time-api.html#point-in-time-api-prereqs \
            (elastic/elasticsearch#69572, closing #61547: \"When searching a PIT created for an index \
            alias, you must have the read privilege for the alias's concrete indices\", not needed to \
            open it); elastic/elasticsearch#75810 (a PIT search is authorised on the concrete index \
            names only); the 403 text is x-pack security's (elastic/elasticsearch#60357): \
            \"action [indices:data/read/search] is unauthorized for user [..] on indices [..], this \
            action is granted by the index privileges [read,all]\"",
    },
];

impl Personality {
    /// Every personality, in the order the compatibility suite runs them.
    pub const ALL: [Personality; 12] = [
        Elasticsearch717,
        Elasticsearch8,
        Elasticsearch8AliasOnlyRole,
        Elasticsearch9,
        Elasticsearch9Dated,
        ElasticsearchServerless,
        OpenSearch2,
        OpenSearch3,
        OpenSearch32,
        AwsOpenSearch2,
        AwsOpenSearch2ExplicitIndexRefused,
        AwsOpenSearch2Fgac,
    ];

    /// Its name (`elasticsearch-8`, `opensearch-2`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Elasticsearch717 => "elasticsearch-7.17",
            Elasticsearch8 => "elasticsearch-8",
            Elasticsearch8AliasOnlyRole => "elasticsearch-8-alias-only-role",
            Elasticsearch9 => "elasticsearch-9",
            Elasticsearch9Dated => "elasticsearch-9-dated",
            ElasticsearchServerless => "elasticsearch-serverless",
            OpenSearch2 => "opensearch-2",
            OpenSearch3 => "opensearch-3",
            OpenSearch32 => "opensearch-3.2",
            AwsOpenSearch2 => "aws-opensearch-2",
            AwsOpenSearch2ExplicitIndexRefused => "aws-opensearch-2-explicit-index-refused",
            AwsOpenSearch2Fgac => "aws-opensearch-2-fgac",
        }
    }

    /// Whether the row for `d` names this personality.
    pub fn has(self, d: Difference) -> bool {
        TABLE
            .iter()
            .any(|r| r.difference == d && r.products.contains(&self))
    }

    /// Whether it is an OpenSearch.
    pub fn is_opensearch(self) -> bool {
        ALL_OS.contains(&self)
    }

    /// The `GET /` answer. Versions: the latest of each line at the time of
    /// writing (elastic.co/downloads/past-releases, opensearch.org/releases);
    /// serverless reports `build_flavor: serverless` and a fixed version
    /// (https://www.elastic.co/docs/solutions/search/serverless-elasticsearch-get-started);
    /// OpenSearch adds `distribution: opensearch` (its RestMainAction).
    pub fn banner(self) -> Value {
        let (number, lucene, flavor) = match self {
            Elasticsearch717 => ("7.17.29", "8.11.3", "default"),
            Elasticsearch8 | Elasticsearch8AliasOnlyRole => ("8.19.7", "9.12.2", "default"),
            Elasticsearch9 | Elasticsearch9Dated => ("9.2.1", "10.3.1", "default"),
            ElasticsearchServerless => ("8.11.0", "9.12.0", "serverless"),
            OpenSearch2
            | AwsOpenSearch2
            | AwsOpenSearch2ExplicitIndexRefused
            | AwsOpenSearch2Fgac => ("2.11.0", "9.7.0", ""),
            OpenSearch3 => ("3.3.0", "10.3.1", ""),
            OpenSearch32 => ("3.2.0", "10.2.2", ""),
        };
        if self.is_opensearch() {
            json!({"name": "node-1", "cluster_name": "compat", "cluster_uuid": "c0mpat",
                "version": {"distribution": "opensearch", "number": number, "build_type": "tar",
                    "build_hash": "0", "build_date": "2025-01-01T00:00:00Z", "build_snapshot": false,
                    "lucene_version": lucene, "minimum_wire_compatibility_version": "7.10.0",
                    "minimum_index_compatibility_version": "7.0.0"},
                "tagline": "The OpenSearch Project: https://opensearch.org/"})
        } else {
            json!({"name": "node-1", "cluster_name": "compat", "cluster_uuid": "c0mpat",
                "version": {"number": number, "build_flavor": flavor, "build_type": "docker",
                    "build_hash": "0", "build_date": "2025-01-01T00:00:00Z", "build_snapshot": false,
                    "lucene_version": lucene, "minimum_wire_compatibility_version": "7.17.0",
                    "minimum_index_compatibility_version": "7.0.0"},
                "tagline": "You Know, for Search"})
        }
    }

    pub(super) fn body_limit(self) -> Option<usize> {
        if self.has(BodyLimit10MiB) {
            Some(10 * 1024 * 1024)
        } else if self.has(BodyLimit100Mb) {
            Some(100 * 1024 * 1024)
        } else {
            None
        }
    }
}
