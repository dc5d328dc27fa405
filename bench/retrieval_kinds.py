"""The five kinds of generated chunk for bench/retrieval.py, each with its vocabulary and its
query writer: product sheets, incident post-mortems, contract clauses, source code with
docstrings, support articles (see bench/retrieval_corpus.py for how they are combined).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class Doc:
    kind: str
    text: str
    facts: dict[str, str] = field(default_factory=dict)


# a query for a chunk: (text, the facts it names, whether it names a unique identifier alone)
Option = tuple[str, tuple[str, ...], bool]


def pick(rng: random.Random, items: list[str]) -> str:
    return items[rng.randrange(len(items))]


def words(text: str) -> list[str]:
    return text.split()


def mix(rng: random.Random, facts: list[str], filler: list[str]) -> str:
    """The fact sentences in order, with 6-21 filler sentences of the kind around them."""
    sentences = list(facts)
    for _ in range(rng.randrange(6, 22)):
        sentences.insert(rng.randrange(len(sentences) + 1), pick(rng, filler))
    paragraphs, current = [], []
    for sentence in sentences:
        current.append(sentence)
        if rng.random() < 0.3:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return "\n\n".join(paragraphs)


# --- products -------------------------------------------------------------------
BRANDS = words(
    "Norvik Altamira Quenta Solberg Vantor Kestrel Brightwell Okapi Meridian Halcyon "
    "Tessaro Lumina Corvid Ardent Pellam Zephra Ostrava Caldera Fenwick Ivorra"
)
SERIES = words("Aero Pulse Terra Nova Flux Summit Drift Echo Prism Vector Atlas Orbit")
CATEGORIES = words(
    "kettle router espresso-machine cordless-drill monitor headphones e-bike thermostat "
    "robot-vacuum air-purifier blender projector"
)
MATERIALS = words("aluminium stainless-steel recycled-polymer walnut borosilicate carbon-fibre")
CONNECTIVITY = ["Wi-Fi 6", "Bluetooth 5.3", "Zigbee", "USB-C", "Thread", "Ethernet"]
FEATURES = [
    "a quiet mode below 30 dB",
    "automatic shut-off after ten minutes idle",
    "a detachable washable filter",
    "voice assistant integration",
    "a child lock on the control panel",
    "an app for scheduling and firmware updates",
    "a magnetic quick-release mount",
    "an e-ink status display",
    "fast charging to 80% in 35 minutes",
    "a replaceable battery pack",
]
PRODUCT_FILLER = [
    "Packaging is fully recyclable and printed with plant-based inks.",
    "Spare parts are stocked for at least seven years after the last production run.",
    "Register the product online to extend support and receive firmware notices.",
    "Clean the housing with a dry cloth; do not immerse the base in water.",
    "The device complies with the relevant EU and UK safety directives.",
    "Accessories from earlier generations of the range remain compatible.",
    "Customer reviews praise the build quality and the long battery life.",
    "Retail availability varies by region and season.",
    "The quick start guide covers unboxing, pairing and the first firmware update.",
    "Independent testing measured the noise level under typical household use.",
    "A carry case and a spare cable are included in the box.",
    "The energy label rates the device in the most efficient class for its category.",
]


def product(rng: random.Random, n: int) -> Doc:
    f = {
        "brand": pick(rng, BRANDS),
        "series": pick(rng, SERIES),
        "category": pick(rng, CATEGORIES).replace("-", " "),
        "sku": f"SKU-{rng.randrange(10000, 99999)}-{n}",
        "weight": f"{rng.randrange(4, 190) / 10:.1f} kg",
        "power": f"{rng.randrange(5, 240) * 10} W",
        "material": pick(rng, MATERIALS).replace("-", " "),
        "connectivity": pick(rng, CONNECTIVITY),
        "feature": pick(rng, FEATURES),
        "warranty": str(rng.choice([1, 2, 3, 5])),
    }
    name = f"{f['brand']} {f['series']} {f['category']}"
    facts = [
        rng.choice(
            [
                f"The {name} ({f['sku']}) weighs {f['weight']} and draws {f['power']}.",
                f"Weighing {f['weight']}, the {name} is rated at {f['power']} ({f['sku']}).",
            ]
        ),
        f"Its body is made of {f['material']} and it connects over {f['connectivity']}.",
        rng.choice([f"Highlights include {f['feature']}.", f"This model adds {f['feature']}."]),
        f"{f['brand']} covers it with a {f['warranty']}-year warranty.",
    ]
    return Doc("product", mix(rng, facts, PRODUCT_FILLER), f)


def product_queries(f: dict[str, str]) -> list[Option]:
    cat, name = f["category"], (f["brand"], f["series"], f["category"])
    return [
        (f"how heavy is the {f['brand']} {f['series']} {cat}", ("weight", *name), False),
        (
            f"{f['series']} {cat} by {f['brand']}: what is it made of and its weight?",
            ("made", *name),
            False,
        ),
        (
            f"does {f['brand']}'s {f['series']} {cat} link via {f['connectivity']}",
            ("link", *name, f["connectivity"]),
            False,
        ),
        (f"warranty length {f['brand']} {f['series']} {cat}", ("warranty", *name), False),
        (f"power rating of {f['sku']}", ("sku", f["sku"]), True),
    ]


# --- incidents ------------------------------------------------------------------
SERVICES = words(
    "payments-gateway search-indexer auth-service ledger-sync media-transcoder "
    "notification-hub inventory-api pricing-engine session-store report-builder "
    "geo-router billing-worker feature-flags audit-log checkout-web"
)
REGIONS = words("eu-west-2 us-east-1 ap-south-1 eu-central-1 us-west-2 sa-east-1 ap-northeast-1")
CAUSES = {
    "an expired TLS certificate": "cert expiry",
    "a feature flag enabled for all tenants": "bad flag rollout",
    "the primary replica's disk filling up": "full disk",
    "a DNS record with a stale TTL": "dns caching",
    "a memory leak in the connection pool": "leaking memory",
    "a schema migration holding a table lock": "locked table during migration",
    "a noisy neighbour saturating the host's network": "network saturation",
    "clock skew between nodes": "time drift",
}
SYMPTOMS = {
    "HTTP 502 responses": "502 errors",
    "p99 latency above four seconds": "slow responses",
    "a consumer queue backlog of two million messages": "queue pile-up",
    "failed logins for every tenant": "login failures",
    "duplicate charges on card payments": "double billing",
}
ENGINEERS = words("Priya Tomasz Aiyana Joaquin Freya Kwame Mei Oskar Leila Dmitri Sunniva Bongani")
INCIDENT_FILLER = [
    "The on-call rotation was paged by the synthetic monitors within two minutes.",
    "Customer support posted updates on the status page every thirty minutes.",
    "No data was lost; the write-ahead log was replayed after recovery.",
    "Dashboards for error budgets were reviewed in the weekly reliability meeting.",
    "A blameless review was held with all teams involved.",
    "Runbooks were updated to cover the failure mode.",
    "Alert thresholds will be revisited by the observability team.",
    "Traffic was shifted to a healthy region while the fix rolled out.",
    "The incident commander coordinated the response in the shared channel.",
    "Canary deployments will now hold for an hour before promotion.",
    "Capacity planning for the next quarter will account for the new load pattern.",
    "Follow-up actions were filed and assigned owners with due dates.",
]


def incident(rng: random.Random, n: int) -> Doc:
    cause = pick(rng, list(CAUSES))
    symptom = pick(rng, list(SYMPTOMS))
    f = {
        "service": pick(rng, SERVICES),
        "region": pick(rng, REGIONS),
        "cause": cause,
        "cause_para": CAUSES[cause],
        "symptom": symptom,
        "symptom_para": SYMPTOMS[symptom],
        "minutes": str(rng.randrange(6, 300)),
        "engineer": pick(rng, ENGINEERS),
        "ticket": f"INC-{rng.randrange(1000, 9999)}{n}",
    }
    facts = [
        f"Post-mortem {f['ticket']}: {f['service']} in {f['region']} returned {symptom} "
        f"for {f['minutes']} minutes.",
        rng.choice(
            [
                f"The root cause was {cause}.",
                f"Investigation traced the failure to {cause}.",
            ]
        ),
        f"{f['engineer']} mitigated it by rolling back and restarting the affected pods.",
    ]
    return Doc("incident", mix(rng, facts, INCIDENT_FILLER), f)


def incident_queries(f: dict[str, str]) -> list[Option]:
    svc, where = f["service"].replace("-", " "), (f["service"], f["region"])
    return [
        (
            f"why did {svc} in {f['region']} have {f['symptom_para']}",
            ("why", *where, f["symptom"]),
            False,
        ),
        (
            f"{f['region']} {svc} outage, was it {f['cause_para']}?",
            ("cause", *where, f["cause"]),
            False,
        ),
        (
            f"who fixed the {f['symptom_para']} on {svc} {f['region']}",
            ("who", *where, f["symptom"]),
            False,
        ),
        (f"what happened in {f['ticket']}", ("ticket", f["ticket"]), True),
    ]


# --- contracts ------------------------------------------------------------------
COMPANIES = words(
    "Halden Morrow Crestline Varga Ashcombe Lindqvist Oberon Tamsin Rivenhall Sarto "
    "Kilbride Nakamura Delacroix Whitlow Brenner Castellan"
)
SUFFIXES = words("Ltd GmbH AS plc SARL BV Inc")
AGREEMENTS = {
    "Supply Agreement": "supply deal",
    "Master Services Agreement": "services contract",
    "Software Licence": "license",
    "Commercial Lease": "office lease",
    "Distribution Agreement": "reseller deal",
}
LAWS = words("England Scotland Norway Germany France Netherlands Delaware Ontario")
CONTRACT_FILLER = [
    "Headings are for convenience only and do not affect interpretation.",
    "Each party shall bear its own costs in connection with this agreement.",
    "Notices shall be in writing and delivered by hand or recorded post.",
    "This agreement constitutes the entire agreement between the parties.",
    "No variation shall be effective unless it is in writing and signed by both parties.",
    "A person who is not a party has no right to enforce any term.",
    "Any waiver of a breach is not a waiver of a later breach.",
    "If any provision is held invalid, the remaining provisions continue in full force.",
    "This agreement may be executed in counterparts, each of which is an original.",
    "Neither party may assign its rights without the prior written consent of the other.",
    "Force majeure events suspend the affected obligations for their duration.",
]


def contract(rng: random.Random, n: int) -> Doc:
    kind = pick(rng, list(AGREEMENTS))
    f = {
        "a": f"{pick(rng, COMPANIES)} {pick(rng, SUFFIXES)}",
        "b": f"{pick(rng, COMPANIES)} {pick(rng, SUFFIXES)}",
        "agreement": kind,
        "agreement_para": AGREEMENTS[kind],
        "notice": str(rng.choice([30, 45, 60, 90, 120, 180])),
        "cap": f"{rng.randrange(1, 40) * 250_000:,}",
        "law": pick(rng, LAWS),
        "net": str(rng.choice([14, 30, 45, 60])),
        "clause": f"{rng.randrange(2, 30)}.{rng.randrange(1, 9)}",
    }
    facts = [
        f"Clause {f['clause']} of the {kind} between {f['a']} and {f['b']}: either party may "
        f"terminate on {f['notice']} days' written notice.",
        f"Aggregate liability is capped at EUR {f['cap']} per contract year.",
        rng.choice(
            [
                f"Invoices are payable within {f['net']} days of receipt.",
                f"Payment terms are net {f['net']} days.",
            ]
        ),
        f"This {kind} is governed by the laws of {f['law']}.",
    ]
    return Doc("contract", mix(rng, facts, CONTRACT_FILLER), f)


def contract_queries(f: dict[str, str]) -> list[Option]:
    a, b, kind = f["a"].split()[0], f["b"].split()[0], f["agreement_para"]
    parties = (a, b, kind)
    return [
        (f"notice period to end the {kind} with {b} ({a})", ("notice", *parties), False),
        (f"what law governs {a}'s {kind} with {b}", ("law", *parties), False),
        (f"liability cap {a} {b} {kind}", ("cap", *parties), False),
        (f"when must {a} pay {b} invoices under the {kind}", ("pay", *parties), False),
    ]


# --- code -----------------------------------------------------------------------
VERBS = words("reconcile compute validate export import schedule throttle migrate render parse")
NOUNS = words(
    "ledger shipping-quote invoice webhook tenant thumbnail payroll coupon sitemap "
    "timesheet warehouse-slot refund"
)
CODE_FILLER = [
    "    logger.debug('starting %s', __name__)",
    "    if not items:\n        return []",
    "    # retries are handled by the caller",
    "    session.commit()",
    "    metrics.increment('calls')",
    "    assert config is not None",
]


def code(rng: random.Random, n: int) -> Doc:
    verb, noun = pick(rng, VERBS), pick(rng, NOUNS)
    f = {
        "verb": verb,
        "noun": noun.replace("-", " "),
        "func": f"{verb}_{noun.replace('-', '_')}_{n}",
        "setting": f"{noun.replace('-', '_').upper()}_{pick(rng, words('TIMEOUT LIMIT BATCH'))}",
        "value": str(rng.randrange(2, 500)),
        "error": f"{noun.replace('-', ' ')} {pick(rng, words('missing stale locked'))}",
    }
    lines = [
        f"def {f['func']}(session, items, *, dry_run=False):",
        f'    """{verb.capitalize()} each {f["noun"]} in `items` against the database.',
        "",
        f"    Batches are limited by the {f['setting']} setting (default {f['value']}).",
        f'    Raises ValueError("{f["error"]}") when an entry cannot be processed.',
        '    """',
    ]
    body = [pick(rng, CODE_FILLER) for _ in range(rng.randrange(6, 18))]
    body.append(f"    return [{verb}_one(session, item) for item in items]")
    return Doc("code", "\n".join(lines + body), f)


def code_queries(f: dict[str, str]) -> list[Option]:
    return [
        (
            f"code that raises '{f['error']}' when trying to {f['verb']} a {f['noun']}",
            ("raises", f["error"], f["verb"], f["noun"]),
            False,
        ),
        (
            f"{f['verb']} {f['noun']} batch size {f['setting']} default",
            ("setting", f["verb"], f["noun"], f["setting"], f["value"]),
            False,
        ),
        (f"function {f['func']}", ("func", f["func"]), True),
    ]


# --- support articles -----------------------------------------------------------
APPLIANCES = words("dishwasher washer-dryer heat-pump oven fridge-freezer induction-hob")
PARTS = {
    "drain pump": "pump that empties the water",
    "door seal": "rubber gasket on the door",
    "inlet valve": "valve letting water in",
    "temperature sensor": "thermal probe",
    "control board": "main electronics",
    "fan motor": "blower",
}
SUPPORT_FILLER = [
    "Switch the appliance off at the wall before any inspection.",
    "Keep the original receipt; it is needed for warranty claims.",
    "If the problem persists, contact an authorised service partner.",
    "Most faults can be cleared by a power cycle of at least one minute.",
    "Do not use abrasive cleaners on the control panel.",
    "Record the serial number from the rating plate before calling support.",
    "Check that the water supply tap is fully open and the hose is not kinked.",
    "Firmware updates are installed automatically when the appliance is online.",
    "Descale regularly in hard-water areas to keep the heating element efficient.",
]


def support(rng: random.Random, n: int) -> Doc:
    part = pick(rng, list(PARTS))
    f = {
        "code": f"E{rng.randrange(10, 99)}-{n:05d}",
        "appliance": pick(rng, APPLIANCES).replace("-", " "),
        "brand": pick(rng, BRANDS),
        "part": part,
        "part_para": PARTS[part],
        "step": pick(rng, words("clean replace reseat inspect recalibrate")),
    }
    facts = [
        f"Error {f['code']} on the {f['brand']} {f['appliance']} means the {part} has failed "
        "its self-test.",
        f"To fix it, {f['step']} the {part} and run a short programme.",
    ]
    return Doc("support", mix(rng, facts, SUPPORT_FILLER), f)


def support_queries(f: dict[str, str]) -> list[Option]:
    device = (f["brand"], f["appliance"], f["part"])
    return [
        (
            f"my {f['brand']} {f['appliance']}: the {f['part_para']} seems broken, how to fix",
            ("broken", *device),
            False,
        ),
        (
            f"{f['appliance']} from {f['brand']} self-test fails on the {f['part_para']}",
            ("selftest", *device),
            False,
        ),
        (f"{f['brand']} {f['appliance']} shows {f['code']}", ("code", f["code"]), True),
    ]
