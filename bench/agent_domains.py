"""The vocabularies of the generated agent sessions (`bench/agent_sessions.py`): five
domains with their goal, subtasks, file tree, measurements, errors, recurring error,
decisions and pinned facts, and the routine sentences every session shares."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Domain:
    name: str
    goal: str
    subtasks: tuple[str, ...]
    dirs: tuple[str, ...]
    ext: str
    nouns: tuple[str, ...]
    measures: tuple[str, ...]  # "{v}" is the seeded number
    errors: tuple[str, ...]  # "{x}" a unique token
    recurring: str  # "{a}", "{b}": numbers that change each time
    decisions: tuple[tuple[str, str], ...]
    pinned: tuple[str, ...]
    test_cmd: str


DOMAINS = (
    Domain(
        "billing",
        "Stop Invoice.total from crashing on credit notes without a currency",
        ("reproduce the crash", "patch the total", "backfill old credit notes", "add tests"),
        ("billing/models", "billing/services", "billing/api", "billing/tests"),
        "py",
        ("invoice", "credit note", "ledger", "currency", "tax rule", "payment"),
        (
            "the ledger holds {v} open credit notes",
            "Processed {v} invoices in 4.2 s",
            "the tax table has {v} rows for the EU",
        ),
        ("KeyError: 'currency_{x}'", "ValueError: invalid literal for int() with base 10: 'C{x}'"),
        "OperationalError: could not connect to server after {a} ms on port {b}",
        (
            ("Default a missing currency to the account currency", "credit notes inherit it"),
            ("Backfill with a migration, not a management command", "it must run once"),
            ("Keep Decimal for every amount", "floats lost cents in tests"),
        ),
        ("Never touch the production ledger: it is read-only for agents",),
        "pytest billing/tests -q",
    ),
    Domain(
        "pipeline",
        "Make the nightly events ETL idempotent when a partition is replayed",
        ("find the duplicate writer", "switch to MERGE", "replay March", "document the runbook"),
        ("etl/jobs", "etl/sql", "etl/schemas", "dags"),
        "sql",
        ("partition", "watermark", "merge key", "staging table", "event", "dedup step"),
        (
            "partition 2024-03-11 holds {v} events",
            "Merged {v} rows into events_clean",
            "the watermark lag reached {v} seconds",
        ),
        (
            "AnalysisException: cannot resolve 'evt_{x}' given input columns",
            "Py4JJavaError: Job aborted due to stage failure in task {x}",
        ),
        "TimeoutError: executor heartbeat timed out after {a} ms ({b} retries)",
        (
            (
                "Use MERGE on (event_id, partition) for the events table",
                "replays must not duplicate",
            ),
            ("Keep the staging table for seven days", "audits read it"),
            ("Replay partitions one at a time", "the cluster has 8 executors"),
        ),
        ("The events bucket is shared with finance: do not delete anything in it",),
        "make test-etl",
    ),
    Domain(
        "frontend",
        "Fix the checkout form losing the shipping address on back navigation",
        ("reproduce in Cypress", "persist the form state", "restore on popstate", "e2e test"),
        ("src/checkout", "src/components", "src/hooks", "cypress/e2e"),
        "tsx",
        ("form state", "address field", "router", "session storage", "reducer", "hook"),
        (
            "the bundle grew to {v} bytes",
            "Lighthouse reports {v} ms total blocking time",
            "the form re-renders {v} times on load",
        ),
        (
            "TypeError: Cannot read properties of undefined (reading 'zip{x}')",
            "Error: Hydration failed because the server rendered id r{x}",
        ),
        "CypressError: Timed out retrying after {a}ms waiting for #address-{b}",
        (
            ("Persist the form in sessionStorage, not localStorage", "it must not outlive the tab"),
            ("Restore the state in a useEffect on popstate", "the router gives no hook"),
            ("Debounce writes by 300 ms", "typing wrote on every key"),
        ),
        ("The payment iframe is third-party: never inject scripts into it",),
        "npx cypress run --spec cypress/e2e/checkout.cy.ts",
    ),
    Domain(
        "infra",
        "Move the staging cluster's ingress from nginx to the cloud load balancer",
        ("inventory the ingress rules", "write the Terraform", "switch DNS", "remove nginx"),
        ("terraform/modules", "terraform/envs/staging", "k8s/ingress", "k8s/charts"),
        "tf",
        ("listener", "target group", "health check", "certificate", "ingress rule", "node pool"),
        (
            "the node pool runs {v} pods",
            "the health check answered in {v} ms",
            "Plan: {v} to add, 2 to change, 0 to destroy",
        ),
        (
            "Error: creating ELBv2 Listener: ValidationError: certificate arn-{x} not found",
            'Error from server (NotFound): services "svc-{x}" not found',
        ),
        "Error: timeout while waiting for state to become 'active'"
        " (last state: 'provisioning', timeout: {a}s, attempt {b})",
        (
            ("Terminate TLS at the load balancer", "the certificates live in ACM"),
            ("Keep nginx running until DNS TTL expires", "the TTL is one hour"),
            ("One target group per service", "health checks differ"),
        ),
        ("Production shares the VPC: never apply without -target in this session",),
        "terraform plan -var-file=staging.tfvars",
    ),
    Domain(
        "training",
        "Find why validation loss diverges after epoch 12 in the ranking model",
        ("reproduce on one GPU", "check the LR schedule", "fix the data loader", "rerun the sweep"),
        ("train", "models", "data", "configs"),
        "py",
        ("learning rate", "scheduler", "data loader", "embedding", "gradient norm", "batch"),
        (
            "the gradient norm peaked at {v} at step 9000",
            "the loader yields {v} samples per second",
            "validation NDCG dropped to 0.{v}",
        ),
        (
            "RuntimeError: CUDA out of memory. Tried to allocate {x} MiB",
            "IndexError: index {x} is out of bounds for dimension 0",
        ),
        "RuntimeError: NCCL watchdog timeout after {a} ms on rank {b}",
        (
            ("Clip gradients at norm 1.0", "the spikes start at the warmup end"),
            ("Use a cosine schedule with 2000 warmup steps", "step decay jumped at epoch 12"),
            ("Shuffle the shards every epoch", "one shard held all positives"),
        ),
        ("The eval set is frozen: do not regenerate data/eval.parquet",),
        "python -m train.run --config configs/small.yaml --steps 200",
    ),
)
FILLER = (
    "Let me look at the {n} in {p} before changing anything.",
    "The {n} code here looks fine; the problem is probably in the {m}.",
    "I'll read {p} next to see how the {n} is built.",
    "Nothing unusual in the {n} handling so far.",
    "That output is what I expected for the {n}.",
    "Checking whether the {m} depends on the {n}.",
    "OK, the {n} is only used in two places.",
)
# routine sentences as specific as the seeded facts: numbers, paths, identifiers
SPECIFIC = (
    "Line {a} of {p} calls {w}_handler with {b} arguments.",
    "The {n} cache currently holds {c} entries.",
    "Run {c} took {b}.{b} s, about the same as before.",
    "{p} imports {w}_utils from {q}.",
    "Loaded {c} {n} records from {p} in {b}.{a} s.",
    "There are {c} calls to {w}_{b} across the repository.",
)
NAME_WORDS = ("core", "util", "state", "io", "view", "rules", "base", "api", "model", "helpers")
USER_NUDGES = ("continue", "looks good, keep going", "any progress?", "ok, go on with the plan")
