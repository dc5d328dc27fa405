"""Saved web pages of five kinds, written with the markup the real sites use (issue 18).

Each page copies the structure, class names and chrome of the site it stands for, as a
browser's "Save page as" keeps it: a Google results page (results, a "People also ask"
block, related searches, tabs, footer), a Wikipedia article in the Vector 2022 skin
(menus, contents, 60 language links, infobox, references, navbox, categories, footer),
a phpBB 3 forum thread (six posts with profiles, a quote, signatures, board chrome), a
Shopify collection page in the Dawn theme (twelve product cards, filters, header menu,
newsletter footer) and a Sphinx page in the Read the Docs theme (side navigation,
breadcrumbs, code, a note, an API entry, a table, previous/next buttons).

`PAGES` pairs each page with the sentences that must survive processing and the
chrome that must not be sent; the engine test (`test_webpages.py`) runs them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

STYLE = (
    "<style>" + "".join(f".c{i}{{margin:{i}px;color:#{i:06x}}}" for i in range(300)) + "</style>"
)
SCRIPT = (
    "<script>"
    + "".join(f"var _g{i}=function(a){{return a+{i}}};" for i in range(300))
    + "</script>"
)


@dataclass(frozen=True)
class WebPage:
    filename: str
    make: Callable[[], bytes]
    kind: str  # metadata.page_kind
    extraction: str  # metadata.extraction
    must_include: tuple[str, ...]
    must_not_include: tuple[str, ...]


# --- a Google results page ------------------------------------------------------------

RESULTS = [
    (
        "https://www.nationalgeographic.com/animals/mammals/facts/zebras",
        "Zebra | National Geographic",
        "Zebras are single-toed ungulates that live in Africa; each stripe pattern is as "
        "unique to its zebra as a fingerprint is to a person, and no two are alike.",
    ),
    (
        "https://en.wikipedia.org/wiki/Zebra",
        "Zebra - Wikipedia",
        "Zebras are African equines with distinctive black-and-white striped coats. There "
        "are three living species: Grevy's zebra, the plains zebra and the mountain zebra.",
    ),
    (
        "https://www.britannica.com/animal/zebra",
        "Zebra | Description, Habitat, & Facts | Britannica",
        "Zebra, any of three species of striped horses belonging to the genus Equus, native "
        "to Africa, that graze on the open grassland and browse on scrubland.",
    ),
    (
        "https://www.worldwildlife.org/species/grevys-zebra",
        "Grevy's Zebra | Species | WWF",
        "Grevy's zebras are the largest of the wild equines; fewer than 2,000 remain, most "
        "of them in northern Kenya, where community conservancies protect their range.",
    ),
    (
        "https://www.sandiegozoo.org/animals/zebra",
        "Zebra | San Diego Zoo Animals & Plants",
        "A zebra foal can stand within an hour of birth and recognises its mother by her "
        "stripes, her scent and her voice during the first few days of its life.",
    ),
]
QUESTIONS = [
    ("Why do zebras have stripes?", "Biting flies land less often on striped coats."),
    ("Can zebras be ridden like horses?", ""),
    ("How long do zebras live in the wild?", ""),
    ("What is a group of zebras called?", ""),
]
RELATED = ["zebra facts", "zebra habitat", "zebra baby", "zebra vs horse", "zebra crossing"]


def _google_result(i: int, url: str, title: str, snippet: str) -> str:
    site = url.split("/")[2]
    crumbs = " › ".join(url.split("/")[3:5])
    return (
        f'<div class="MjjYud"><div class="g Ww4FFb vt6azd tF2Cxc asEBEc" lang="en" '
        f'style="width:652px" jscontroller="SC7lYd" jsaction="QyLbLe:OMITjf" data-hveid="CA{i}">'
        f'<div class="N54PNb BToiNc cvP2Ce" data-snc="ih6Jnb_{i}"><div class="kb0PBd cvP2Ce '
        f'A9Y9g jGGQ5e" data-snf="x5WNvb" data-snhf="0"><div class="yuRUbf"><div><span '
        f'jscontroller="msmzHf"><a jsname="UWckNb" href="{url}" data-ved="2ahUKEw{i}" '
        f'ping="/url?sa=t&amp;source=web&amp;rct=j&amp;url={url}&amp;ved=2ahUKEw{i}"><br>'
        f'<h3 class="LC20lb MBeuO DKV0Md">{title}</h3><div class="notranslate HGLrXd NJjxre '
        f'iUh30 ojE3Fb"><div class="q0vns"><span class="H9lube"><div class="eqA2re NjwKYd '
        f'Vwoesf" aria-hidden="true"><img class="XNo5Ab" src="data:image/png;base64,iVBOR" '
        f'alt="" style="height:18px;width:18px"></div></span><div><span class="VuuXrf">{site}'
        f'</span><div class="byrV5b"><cite class="qLRx3b tjvcx GvPZzd cHaqb" role="text">'
        f'{url.split("/", maxsplit=1)[0]}//{site}<span class="ylgVCe ob9lvb" role="text">'
        f" › {crumbs}"
        f"</span></cite></div></div></div></div></a></span></div></div></div>"
        f'<div class="kb0PBd cvP2Ce A9Y9g" data-sncf="1" data-snf="nke7rc"><div class="VwiC3b '
        f'yXK7lf lVm3ye r025kc hJNv6b Hdw6tb" style="-webkit-line-clamp:2"><span class="YrbPuc">'
        f"<span>Mar {i + 3}, 2024</span> — </span><span>{snippet}</span></div></div></div></div>"
        "</div>"
    )


def _people_also_ask() -> str:
    pairs = []
    for n, (question, answer) in enumerate(QUESTIONS):
        expanded = "true" if answer else "false"
        body = (
            f'<div class="wDYxhc" data-md="61"><div class="LGOjhe" data-attrid="wa:/description">'
            f'<span class="ILfuVd"><span class="hgKElc">{answer}</span></span></div></div>'
            if answer
            else ""
        )
        pairs.append(
            f'<div jsname="yEVEwb" class="related-question-pair" data-q="{question}" '
            f'data-lk="" jscontroller="wHkpfb"><div class="dnXCYb" role="button" '
            f'aria-expanded="{expanded}" tabindex="0" jsname="tJHJj" jsaction="AWEk5c">'
            f'<div class="JlqpRe"><span>{question}</span></div><div class="Ka0Qgb '
            f'jOkf7b"><span class="z1asCe QFl0Ff">'
            f'<svg focusable="false" viewBox="0 0 24 24"><path d="M16.59 8.59L12 13.17"/></svg>'
            f'</span></div></div><div jsname="NRdf4c" data-ved="2ahUK{n}">{body}</div></div>'
        )
    return (
        '<div class="MjjYud"><div jsname="N760b" class="Wt5Tfe"><div class="cUnQKe" '
        'data-initq="zebra" data-it="rq"><div class="JolIg" role="heading" aria-level="2">'
        '<span class="mgAbYb OSrXXb RES9jf IFnjPb">People also ask</span></div>'
        f'<div jsname="Cpkphb">{"".join(pairs)}</div><div class="Jb0Zif" role="button">'
        "<span>Feedback</span></div></div></div></div>"
    )


def _google_chrome_top() -> str:
    tabs = "".join(
        f'<div jsname="VIftV" class="hdtb-mitem"><a class="LatpMc nPDzT T3FoJb" '
        f'href="/search?q=zebra&amp;tbm={tbm}"><div class="YmvwI">{label}</div></a></div>'
        for tbm, label in [
            ("", "All"),
            ("isch", "Images"),
            ("nws", "News"),
            ("vid", "Videos"),
            ("shop", "Shopping"),
            ("bks", "Books"),
        ]
    )
    apps = "".join(
        f'<li><a href="https://{a.lower()}.google.com/"><span>{a}</span></a></li>'
        for a in [
            "Search",
            "Maps",
            "YouTube",
            "Play",
            "News",
            "Gmail",
            "Meet",
            "Chat",
            "Contacts",
            "Drive",
            "Calendar",
            "Translate",
            "Photos",
            "Shopping",
        ]
    )
    return (
        '<div class="L3eUgb" data-hveid="1"><div class="o3j99 n1xJcf Ne6nSd" role="navigation">'
        f'<div class="gb_Ld"><ul class="gb_Ed" aria-label="Google apps">{apps}</ul></div>'
        '<a class="gb_A" href="https://accounts.google.com/ServiceLogin">Sign in</a></div></div>'
        '<div id="searchform" class="CvDJxb"><form class="tsf" action="/search" '
        'role="search" id="tsf" method="GET" name="f"><div class="A8SBwf"><div '
        'class="RNNXgb"><textarea class="gLFyf" id="APjFqb" name="q" rows="1" '
        'aria-label="Search" role="combobox">zebra</textarea><div class="dRYYxd"><button '
        'class="Tg7LZd" aria-label="Search" type="submit"><span>Search</span></button>'
        "</div></div></div></form></div>"
        f'<div id="hdtb" role="navigation"><div id="hdtb-sc">{tabs}'
        '<div class="hdtb-mitem"><span>More</span></div><div class="hdtb-mitem">'
        '<a href="/advanced_search">Tools</a></div></div></div>'
        '<div id="appbar"><div id="result-stats">About 187,000,000 results '
        "<nobr> (0.41 seconds)&nbsp;</nobr></div></div>"
    )


def _google_chrome_bottom() -> str:
    related = "".join(
        f'<div class="s75CSd u60jwe r2fjmd AB4Wff"><a class="ngTNl ggLgoc" '
        f'href="/search?q={r.replace(" ", "+")}"><div class="aXBZVd unhzXb"></div><div '
        f'class="s75CSd OSrXXb AB4Wff"><b>{r.split(" ", 1)[-1]}</b> {r.split(" ", 1)[0]}'
        "</div></a></div>"
        for r in RELATED
    )
    pages = "".join(
        f'<td><a aria-label="Page {n}" class="fl" href="/search?q=zebra&amp;start={10 * n}">'
        f"{n}</a></td>"
        for n in range(2, 11)
    )
    return (
        '<div id="botstuff"><div data-hveid="CBsQAA"><div class="y6Uyqe"><div '
        'class="oIk2Cb" role="heading" aria-level="2"><span class="mgAbYb">People also '
        f'search for</span></div><div class="EIaa9b">{related}</div></div></div>'
        f'<div role="navigation"><table class="AaVjTc"><tr jsname="TeSSVd"><td class="d6cvqb '
        f'BBwThe"><span class="SJajHc"></span></td><td class="YyVfkd">1</td>{pages}'
        '<td class="d6cvqb BBwThe"><a id="pnnext" href="/search?q=zebra&amp;start=10">'
        '<span class="oeN89d">Next</span></a></td></tr></table></div></div>'
        '<div id="footcnt"><div class="fbar"><div class="b0KoTc"><span class="dfB0uf">'
        'United States</span><span class="unknown_loc"></span><span id="swml_addr">'
        "Bay Area, California - From your IP address</span> - <a href="
        '"/search?q=zebra&amp;uule">Update location</a></div><div class="B4GxFc"><span>'
        '<a class="pHiOh" href="https://support.google.com/websearch">Help</a><a '
        'class="pHiOh" href="#">Send feedback</a><a class="pHiOh" '
        'href="https://policies.google.com/privacy">Privacy</a><a class="pHiOh" '
        'href="https://policies.google.com/terms">Terms</a></span></div></div></div>'
    )


def google_results_page() -> bytes:
    first, *rest = (_google_result(i, *r) for i, r in enumerate(RESULTS))
    return (
        "<!DOCTYPE html>\n<!-- saved from url=(0041)https://www.google.com/search?q=zebra -->\n"
        '<html itemscope="" itemtype="http://schema.org/SearchResultsPage" lang="en"><head>'
        '<meta charset="UTF-8"><meta content="/images/branding/googleg/1x/googleg_standard_'
        'color_128dp.png" itemprop="image"><title>zebra - Google Search</title>'
        f'{STYLE}{SCRIPT}</head><body jsmodel="hspDDf" class="srp">'
        f'<div class="main" id="main"><div id="cnt">{_google_chrome_top()}'
        '<div id="rcnt"><div id="center_col"><div id="res" role="main"><div id="search">'
        '<div data-hveid="CAEQAA"><h1 class="bNg8Rb OhScic zsYMMe BBwThe">Search Results'
        f'</h1><div id="rso">{first}{_people_also_ask()}{"".join(rest)}</div></div></div>'
        f"</div>{_google_chrome_bottom()}</div></div></div>"
        f"{SCRIPT}</body></html>"
    ).encode()


# --- a Wikipedia article (Vector 2022) ------------------------------------------------

WIKI_LEAD = (
    "Zebras (subgenus Hippotigris) are African equines with distinctive black-and-white "
    "striped coats. There are three living species: Grevy's zebra, the plains zebra and "
    "the mountain zebra."
)
WIKI_SECTION = (
    "The stripes are probably a defence against biting flies: experiments with coats "
    "painted on horses found that horseflies approached striped coats but rarely landed."
)
WIKI_PARAGRAPHS = [
    "Zebras share the genus Equus with horses and asses, the three groups being the only "
    "living members of the family Equidae.",
    "Plains zebras and mountain zebras live in family groups of a stallion, several mares "
    "and their young; these groups join herds on the open grassland.",
    "Grevy's zebras live in loose associations, and a male defends a territory where mares "
    "pass through to reach water during the dry season.",
    "Zebras are grazers and can subsist on lower-quality vegetation than the antelopes "
    "they share their range with, eating mostly tall, coarse grasses.",
    "Predators of zebras include lions, spotted hyenas, African wild dogs and Nile "
    "crocodiles, and a herd guards its foals by closing ranks around them.",
    "Zebras have been hunted for their skins, and habitat loss has reduced the range of "
    "Grevy's zebra to parts of Kenya and Ethiopia.",
]
LANGUAGES = [
    ("af", "Afrikaans"),
    ("ar", "العربية"),
    ("az", "Azərbaycanca"),
    ("bg", "Български"),
    ("bn", "বাংলা"),
    ("ca", "Català"),
    ("cs", "Čeština"),
    ("cy", "Cymraeg"),
    ("da", "Dansk"),
    ("de", "Deutsch"),
    ("el", "Ελληνικά"),
    ("eo", "Esperanto"),
    ("es", "Español"),
    ("et", "Eesti"),
    ("eu", "Euskara"),
    ("fa", "فارسی"),
    ("fi", "Suomi"),
    ("fr", "Français"),
    ("ga", "Gaeilge"),
    ("gl", "Galego"),
    ("he", "עברית"),
    ("hi", "हिन्दी"),
    ("hr", "Hrvatski"),
    ("hu", "Magyar"),
    ("hy", "Հայերեն"),
    ("id", "Bahasa Indonesia"),
    ("is", "Íslenska"),
    ("it", "Italiano"),
    ("ja", "日本語"),
    ("ka", "ქართული"),
    ("kk", "Қазақша"),
    ("ko", "한국어"),
    ("la", "Latina"),
    ("lt", "Lietuvių"),
    ("lv", "Latviešu"),
    ("mk", "Македонски"),
    ("ml", "മലയാളം"),
    ("ms", "Bahasa Melayu"),
    ("nl", "Nederlands"),
    ("nn", "Norsk nynorsk"),
    ("no", "Norsk bokmål"),
    ("pl", "Polski"),
    ("pt", "Português"),
    ("ro", "Română"),
    ("ru", "Русский"),
    ("sk", "Slovenčina"),
    ("sl", "Slovenščina"),
    ("sr", "Српски / srpski"),
    ("sv", "Svenska"),
    ("sw", "Kiswahili"),
    ("ta", "தமிழ்"),
    ("th", "ไทย"),
    ("tr", "Türkçe"),
    ("uk", "Українська"),
    ("ur", "اردو"),
    ("vi", "Tiếng Việt"),
    ("yo", "Yorùbá"),
    ("zh", "中文"),
    ("zu", "IsiZulu"),
    ("xh", "IsiXhosa"),
]


def _wiki_menu() -> str:
    groups = {
        "Navigation": [
            "Main page",
            "Contents",
            "Current events",
            "Random article",
            "About Wikipedia",
            "Contact us",
        ],
        "Contribute": [
            "Help",
            "Learn to edit",
            "Community portal",
            "Recent changes",
            "Upload file",
            "Special pages",
        ],
    }
    menus = "".join(
        f'<div id="p-{name.lower()}" class="vector-menu mw-portlet" role="navigation">'
        f'<div class="vector-menu-heading">{name}</div><div class="vector-menu-content">'
        '<ul class="vector-menu-content-list">'
        + "".join(
            f'<li class="mw-list-item"><a href="/wiki/{item.replace(" ", "_")}">'
            f"<span>{item}</span></a></li>"
            for item in items
        )
        + "</ul></div></div>"
        for name, items in groups.items()
    )
    return (
        '<a class="mw-jump-link" href="#bodyContent">Jump to content</a>'
        '<div class="vector-header-container"><header class="vector-header mw-header">'
        '<div class="vector-header-start"><nav class="vector-main-menu-landmark" '
        'aria-label="Site"><div id="vector-main-menu-dropdown" class="vector-dropdown">'
        f'<div class="vector-dropdown-content"><div id="vector-main-menu">{menus}</div></div>'
        '</div></nav><a href="/wiki/Main_Page" class="mw-logo"><span class="mw-logo-wordmark">'
        'Wikipedia</span><span class="mw-logo-tagline">The Free Encyclopedia</span></a></div>'
        '<div class="vector-header-end"><div id="p-search" role="search" class="vector-search-box">'
        '<form action="/w/index.php" id="searchform"><input type="search" name="search" '
        'placeholder="Search Wikipedia"><button class="cdx-button">Search</button></form></div>'
        '<nav class="vector-user-links" aria-label="Personal tools"><ul><li><a href="/wiki/'
        'Special:CreateAccount"><span>Create account</span></a></li><li><a href="/wiki/'
        'Special:UserLogin"><span>Log in</span></a></li></ul></nav></div></header></div>'
    )


def _wiki_infobox() -> str:
    rows = [
        ("Kingdom:", "Animalia"),
        ("Phylum:", "Chordata"),
        ("Class:", "Mammalia"),
        ("Order:", "Perissodactyla"),
        ("Family:", "Equidae"),
        ("Genus:", "Equus"),
        ("Subgenus:", "Hippotigris"),
    ]
    cells = "".join(
        f'<tr><td>{k}</td><td><a href="/wiki/{v}" title="{v}">{v}</a></td></tr>' for k, v in rows
    )
    return (
        '<table class="infobox biota" style="text-align:left;width:200px"><tbody><tr><th '
        'colspan="2" style="text-align:center">Zebras<br><span class="noprint" '
        'style="font-size:85%">Temporal range: Pleistocene–Present</span></th></tr>'
        '<tr><td colspan="2"><span typeof="mw:File"><a href="/wiki/File:Plains_Zebra.jpg" '
        'class="mw-file-description"><img src="//upload.wikimedia.org/x.jpg" width="220"></a>'
        '</span><div class="infobox-caption">Plains zebra in Ngorongoro Crater</div></td></tr>'
        '<tr><th colspan="2"><a href="/wiki/Taxonomy_(biology)">Scientific classification</a>'
        f"</th></tr>{cells}</tbody></table>"
    )


def _wiki_heading(anchor: str, title: str, n: int) -> str:
    return (
        f'<div class="mw-heading mw-heading2"><h2 id="{anchor}">{title}</h2><span '
        'class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/w/'
        f'index.php?title=Zebra&amp;action=edit&amp;section={n}">edit</a><span '
        'class="mw-editsection-bracket">]</span></span></div>'
    )


def _cite(n: int) -> str:
    return f'<sup id="cite_ref-{n}" class="reference"><a href="#cite_note-{n}">[{n}]</a></sup>'


def _wiki_article() -> str:
    body = [
        '<div class="shortdescription nomobile noexcerpt noprint searchaux" '
        'style="display:none">Subgenus of African equines</div>',
        '<div role="note" class="hatnote navigation-not-searchable">For other uses, see '
        '<a href="/wiki/Zebra_(disambiguation)">Zebra (disambiguation)</a>.</div>',
        _wiki_infobox(),
        f"<p><b>Zebras</b> {WIKI_LEAD.split(' ', 1)[1]}{_cite(1)}</p>",
        '<meta property="mw:PageProp/toc">',
    ]
    sections = ["Taxonomy", "Stripes", "Ecology", "Behaviour", "Predators", "Conservation"]
    for n, (title, text) in enumerate(zip(sections, WIKI_PARAGRAPHS, strict=True), 1):
        body.append(_wiki_heading(title, title, n))
        body.append(f"<p>{text}{_cite(n + 1)} Further details follow in the sources.</p>")
        if title == "Stripes":
            body.append(f"<p>{WIKI_SECTION}{_cite(9)}</p>")
    body.append(_wiki_heading("References", "References", 8))
    refs = "".join(
        f'<li id="cite_note-{n}"><span class="mw-cite-backlink"><b><a href="#cite_ref-{n}">^'
        f'</a></b></span> <span class="reference-text"><cite class="citation journal cs1">'
        f'Author {n}, A. (20{10 + n}). "<a class="external text" href="https://doi.org/10.1000/'
        f'z{n}">Zebra study number {n}</a>". <i>Journal of Zoology</i>. <b>{n}</b>: {n}–{n + 9}.'
        "</cite></span></li>"
        for n in range(1, 10)
    )
    body.append(
        '<div class="reflist"><div class="mw-references-wrap"><ol class="references">'
        f"{refs}</ol></div></div>"
    )
    navbox = "".join(
        f'<li><a href="/wiki/{s}_zebra">{s} zebra</a></li>'
        for s in ["Plains", "Mountain", "Grevy's"]
    ) + "".join(f'<li><a href="/wiki/Species_{i}">Odd-toed species {i}</a></li>' for i in range(30))
    body.append(
        '<div class="navbox-styles"></div><div role="navigation" class="navbox" '
        'aria-labelledby="Extant_Perissodactyla"><table class="nowraplinks navbox-inner">'
        '<tr><th id="Extant_Perissodactyla" class="navbox-title">Extant species of order '
        f'Perissodactyla</th></tr><tr><td class="navbox-list"><ul>{navbox}</ul></td></tr>'
        "</table></div>"
    )
    return "".join(body)


def _wiki_footer() -> str:
    places = "".join(
        f'<li><a href="https://foundation.wikimedia.org/wiki/{p.replace(" ", "_")}">{p}</a></li>'
        for p in [
            "Privacy policy",
            "About Wikipedia",
            "Disclaimers",
            "Contact Wikipedia",
            "Code of Conduct",
            "Developers",
            "Statistics",
            "Cookie statement",
        ]
    )
    return (
        '<div class="printfooter">Retrieved from "<a href="https://en.wikipedia.org/w/index.php'
        '?title=Zebra&amp;oldid=1211">https://en.wikipedia.org/w/index.php?title=Zebra&amp;'
        'oldid=1211</a>"</div><div id="catlinks" class="catlinks"><div id="mw-normal-catlinks">'
        '<a href="/wiki/Help:Category">Categories</a>: <ul><li><a href="/wiki/Category:Zebras">'
        'Zebras</a></li><li><a href="/wiki/Category:Equus">Equus</a></li><li><a href="/wiki/'
        'Category:Mammals_of_Africa">Mammals of Africa</a></li></ul></div></div>'
        '</div></div></main></div><div class="mw-footer-container"><footer id="footer" '
        'class="mw-footer"><ul id="footer-info"><li id="footer-info-lastmod">This page was '
        'last edited on 2 March 2024, at 10:00 (UTC).</li><li id="footer-info-copyright">Text '
        "is available under the Creative Commons Attribution-ShareAlike License 4.0; additional"
        " terms may apply.</li></ul>"
        f'<ul id="footer-places">{places}</ul></footer></div>'
    )


def wikipedia_article() -> bytes:
    languages = "".join(
        f'<li class="interlanguage-link interwiki-{code} mw-list-item"><a href="https://{code}'
        f'.wikipedia.org/wiki/Zebra" title="Zebra – {name}" lang="{code}" hreflang="{code}" '
        f'class="interlanguage-link-target"><span>{name}</span></a></li>'
        for code, name in LANGUAGES
    )
    toc = "".join(
        f'<li class="vector-toc-list-item vector-toc-level-1"><a class="vector-toc-link" '
        f'href="#{s}"><div class="vector-toc-text"><span class="vector-toc-numb">{n}</span>'
        f"<span>{s}</span></div></a></li>"
        for n, s in enumerate(
            [
                "Taxonomy",
                "Stripes",
                "Ecology",
                "Behaviour",
                "Predators",
                "Conservation",
                "References",
            ],
            1,
        )
    )
    return (
        '<!DOCTYPE html>\n<html class="client-js vector-feature-toc-pinned-clientpref-1" '
        'lang="en" dir="ltr"><head><meta charset="UTF-8"><title>Zebra - Wikipedia</title>'
        '<link rel="canonical" href="https://en.wikipedia.org/wiki/Zebra">'
        '<meta property="og:title" content="Zebra - Wikipedia">'
        f'{STYLE}</head><body class="skin-vector skin-vector-2022 mediawiki ltr">'
        f'<div class="vector-header-container">{_wiki_menu()}</div>'
        '<div class="mw-page-container"><div class="mw-page-container-inner">'
        '<div class="vector-column-start"><div class="vector-main-menu-container"></div>'
        '<nav id="mw-panel-toc" aria-label="Contents" class="vector-toc-landmark">'
        '<div id="vector-toc" class="vector-toc vector-pinnable-element"><div class="vector-'
        'pinnable-header"><h2 class="vector-pinnable-header-label">Contents</h2><button '
        'class="vector-pinnable-header-toggle-button">hide</button></div><ul class="vector-'
        f'toc-contents" id="mw-panel-toc-list">{toc}</ul></div></nav></div>'
        '<div class="mw-content-container"><main id="content" class="mw-body">'
        '<header class="mw-body-header vector-page-titlebar"><h1 id="firstHeading" '
        'class="firstHeading mw-first-heading"><span class="mw-page-title-main">Zebra</span>'
        '</h1><div id="p-lang-btn" class="vector-dropdown mw-portlet mw-portlet-lang">'
        '<input type="checkbox" id="p-lang-btn-checkbox" class="vector-dropdown-checkbox">'
        '<label class="vector-dropdown-label"><span class="vector-dropdown-label-text">'
        f'{len(LANGUAGES)} languages</span></label><div class="vector-dropdown-content">'
        f'<div class="vector-menu-content"><ul class="vector-menu-content-list">{languages}'
        '</ul></div></div></div></header><div class="vector-page-toolbar"><nav aria-label='
        '"Namespaces"><ul><li class="selected"><a href="/wiki/Zebra">Article</a></li><li>'
        '<a href="/wiki/Talk:Zebra">Talk</a></li></ul></nav><nav aria-label="Views"><ul><li>'
        '<a href="/wiki/Zebra">Read</a></li><li><a href="/w/index.php?title=Zebra&amp;action'
        '=edit">Edit</a></li><li><a href="/w/index.php?title=Zebra&amp;action=history">View '
        'history</a></li></ul></nav></div><div id="bodyContent" class="vector-body" '
        'aria-labelledby="firstHeading"><div id="siteSub" class="noprint">From Wikipedia, the '
        'free encyclopedia</div><div id="mw-content-text" class="mw-body-content"><div '
        f'class="mw-content-ltr mw-parser-output" lang="en" dir="ltr">{_wiki_article()}</div>'
        f"{_wiki_footer()}</div></div>{SCRIPT}</body></html>"
    ).encode()


# --- a phpBB 3 forum thread (prosilver) -----------------------------------------------

POSTS = [
    (
        "stripe_fan",
        "Our rescue zebra foal refuses the bottle unless the milk is warmed to "
        "exactly body temperature; has anyone else seen this?",
    ),
    (
        "savanna_vet",
        "Foals imprint on their dam's scent, so rubbing the bottle on a cloth "
        "from the mare's stall often helps more than the temperature does.",
    ),
    (
        "stripe_fan",
        "The cloth trick worked on the second day; she now drinks two litres "
        "every three hours and follows the keeper around the paddock.",
    ),
    (
        "mara_keeper",
        "Watch her weight weekly: a healthy plains zebra foal gains about half "
        "a kilogram a day during the first month.",
    ),
    (
        "equid_nerd",
        "Also keep her with at least one other equid once she is weaned, or she "
        "will start pacing the fence line out of loneliness.",
    ),
    (
        "savanna_vet",
        "Agreed on company; a calm donkey has worked as a companion in every "
        "zoo I have advised on hand-rearing.",
    ),
]


def _phpbb_post(n: int, author: str, text: str) -> str:
    quote = (
        f'<blockquote><div><cite><a href="./memberlist.php?mode=viewprofile&amp;u=7">'
        f'{POSTS[n - 1][0]}</a> wrote: <a href="./viewtopic.php?p={1000 + n - 1}#p'
        f'{1000 + n - 1}">↑</a></cite>{POSTS[n - 1][1][:60]}…</div></blockquote>'
        if n in (2, 4)
        else ""
    )
    pid = 1000 + n
    return (
        f'<div id="p{pid}" class="post has-profile bg{1 + n % 2}"><div class="inner">'
        f'<dl class="postprofile" id="profile{pid}"><dt class="has-profile-rank no-avatar">'
        f'<div class="avatar-container"></div><a href="./memberlist.php?mode=viewprofile&amp;'
        f'u={n}" class="username">{author}</a></dt><dd class="profile-rank">Registered User'
        f'</dd><dd class="profile-posts"><strong>Posts:</strong> <a href="./search.php?'
        f'author_id={n}&amp;sr=posts">{120 + n}</a></dd><dd class="profile-joined"><strong>'
        "Joined:</strong> Tue Jan 01, 2019 10:00 am</dd></dl>"
        f'<div class="postbody"><div id="post_content{pid}"><h3 class="first"><a href="#p{pid}">'
        'Re: Hand-rearing a zebra foal</a></h3><ul class="post-buttons"><li><a href="./'
        f'posting.php?mode=quote&amp;p={pid}" title="Reply with quote" class="button '
        'button-icon-only"><i class="icon fa-quote-left fa-fw" aria-hidden="true"></i><span>'
        'Quote</span></a></li></ul><p class="author"><a class="unread" href="./viewtopic.php?'
        f'p={pid}#p{pid}" title="Post"><i class="icon fa-file fa-fw icon-lightgray icon-md">'
        '</i><span class="sr-only">Post</span></a> <span class="responsive-hide">by <strong>'
        f'<a href="./memberlist.php?mode=viewprofile&amp;u={n}" class="username">{author}</a>'
        f'</strong> » </span><time datetime="2024-03-0{n + 1}T10:00:00+00:00">'
        f"Fri Mar 0{n + 1}, 2024 10:00 am</time></p>"
        f'<div class="content">{quote}{text}</div><div id="sig{pid}" '
        f'class="signature">{author} — hoofstock keeper since 2009</div></div></div>'
        '<div class="back2top"><a href="#top" class="top" title="Top"><i class="icon '
        'fa-chevron-circle-up fa-fw icon-gray" aria-hidden="true"></i><span class="sr-only">'
        'Top</span></a></div></div></div><hr class="divider">'
    )


def phpbb_thread() -> bytes:
    posts = "".join(_phpbb_post(n, a, t) for n, (a, t) in enumerate(POSTS))
    crumbs = (
        '<ul id="nav-breadcrumbs" class="nav-breadcrumbs linklist navlinks" role="menubar">'
        '<li class="breadcrumbs" itemscope itemtype="https://schema.org/BreadcrumbList">'
        '<span class="crumb"><a href="./index.php" accesskey="h"><span>Board index</span></a>'
        '</span><span class="crumb"><a href="./viewforum.php?f=4"><span>Equid care</span></a>'
        "</span></li></ul>"
    )
    return (
        '<!DOCTYPE html>\n<html dir="ltr" lang="en-gb"><head><meta charset="utf-8">'
        "<title>Hand-rearing a zebra foal - Hoofstock Keepers Forum</title>"
        '<link href="./styles/prosilver/theme/stylesheet.css?assets_version=7" rel="stylesheet">'
        f'{STYLE}</head><body id="phpbb" class="nojs notouch section-viewtopic ltr">'
        '<div id="wrap" class="wrap"><a id="top" class="top-anchor" accesskey="t"></a>'
        '<div id="page-header"><div class="headerbar" role="banner"><div class="inner">'
        '<div id="site-description" class="site-description"><a id="logo" class="logo" '
        'href="./index.php"><span class="site_logo"></span></a><h1>Hoofstock Keepers Forum'
        "</h1><p>Care and husbandry of zebras, asses and wild horses</p></div>"
        '<div id="search-box" class="search-box search-header" role="search"><form action="./'
        'search.php" method="get" id="search"><fieldset><input name="keywords" id="keywords" '
        'type="search" title="Search for keywords" placeholder="Search…"><button '
        'class="button button-search" type="submit" title="Search"><span class="sr-only">'
        "Search</span></button></fieldset></form></div></div></div>"
        '<div class="navbar" role="navigation"><div class="inner"><ul id="nav-main" '
        'class="nav-main linklist" role="menubar"><li><a href="/app.php/help/faq" rel="help" '
        'title="Frequently Asked Questions" role="menuitem"><span>FAQ</span></a></li><li><a '
        'href="./ucp.php?mode=register" role="menuitem"><span>Register</span></a></li><li><a '
        'href="./ucp.php?mode=login" title="Login" accesskey="x" role="menuitem"><span>Login'
        f"</span></a></li></ul>{crumbs}</div></div></div>"
        '<div id="page-body" class="page-body" role="main"><h2 class="topic-title"><a href="./'
        'viewtopic.php?t=77">Hand-rearing a zebra foal</a></h2><div class="action-bar bar-top">'
        '<a href="./posting.php?mode=reply&amp;t=77" class="button" title="Post a reply"><span>'
        'Post Reply</span></a><div class="pagination">6 posts • Page <strong>1</strong> of '
        f"<strong>1</strong></div></div>{posts}"
        '<div class="action-bar bar-bottom"><div class="dropdown-container"><span>Display:</span>'
        '<select name="st" id="st"><option value="0" selected>All posts</option><option '
        'value="1">1 day</option><option value="7">1 week</option></select></div></div>'
        '<div class="action-bar actions-jump"><p class="jumpbox-return"><a href="./viewforum.'
        'php?f=4" class="left-box arrow-left" accesskey="r"><span>Return to “Equid care”'
        '</span></a></p></div><div class="stat-block online-list"><h3>Who is online</h3><p>'
        "Users browsing this forum: No registered users and 3 guests</p></div></div>"
        '<div id="page-footer" class="page-footer" role="contentinfo"><div class="navbar" '
        'role="navigation"><ul id="nav-footer" class="nav-footer linklist" role="menubar">'
        '<li class="rightside"><a href="./ucp.php?mode=delete_cookies"><span>Delete cookies'
        '</span></a></li><li class="rightside">All times are <span title="UTC">UTC</span></li>'
        '</ul></div><div class="copyright">Powered by <a href="https://www.phpbb.com/">phpBB'
        "</a>® Forum Software © phpBB Limited</div></div></div>"
        f"{SCRIPT}</body></html>"
    ).encode()


# --- a Shopify collection page (Dawn) -------------------------------------------------

PRODUCTS = [
    ("Striped Zebra Mug", "18.00"),
    ("Zebra Plush Foal", "24.00"),
    ("Savanna Wall Print", "35.00"),
    ("Grevy's Zebra Field Guide", "29.50"),
    ("Zebra Stripe Tote Bag", "22.00"),
    ("Serengeti Jigsaw Puzzle", "27.00"),
    ("Zebra Crossing Socks", "12.00"),
    ("Hoofprint Notebook", "9.50"),
    ("Mountain Zebra Enamel Pin", "8.00"),
    ("Zebra Family Figurines", "44.00"),
    ("Striped Silk Scarf", "58.00"),
    ("Wild Horses Calendar 2025", "16.00"),
]


def _shopify_card(n: int, name: str, price: str) -> str:
    handle = name.lower().replace(" ", "-").replace("'", "")
    return (
        '<li class="grid__item scroll-trigger animate--slide-in" data-cascade style="--'
        f'animation-order: {n + 1};"><div class="card-wrapper product-card-wrapper underline-'
        'links-hover"><div class="card card--standard card--media" style="--ratio-percent: '
        '100%;"><div class="card__inner color-scheme-2 gradient ratio"><div class="card__'
        'media"><div class="media media--transparent media--hover-effect"><img src="//zebra-'
        f'goods.example.com/cdn/shop/files/{handle}.jpg?width=533" alt="{name}" class="motion-'
        'reduce" loading="lazy" width="1000" height="1000"></div></div><div class="card__'
        'content"><div class="card__information"><h3 class="card__heading"><a href="/products'
        f'/{handle}" id="StandardCardNoMediaLink-{n}" class="full-unstyled-link" aria-'
        f'labelledby="StandardCardNoMediaLink-{n} NoMediaStandardBadge-{n}">{name}</a></h3>'
        '</div><div class="card__badge bottom left"></div></div></div><div class="card__'
        'content"><div class="card__information"><h3 class="card__heading h5" id="title-'
        f'{n}"><a href="/products/{handle}" id="CardLink-{n}" class="full-unstyled-link" '
        f'aria-labelledby="CardLink-{n} Badge-{n}">{name}</a></h3><div class="card-'
        'information"><span class="caption-large light"></span><div class="price "><div '
        'class="price__container"><div class="price__regular"><span class="visually-hidden '
        'visually-hidden--inline">Regular price</span><span class="price-item price-item--'
        f'regular">${price} USD</span></div></div></div></div></div><div class="quick-add '
        'no-js-hidden"><button id="quick-add-{n}" type="submit" name="add" class="quick-add__'
        'submit button button--full-width button--secondary"><span>Add to cart</span></button>'
        "</div></div></div></div></li>"
    )


def shopify_collection() -> bytes:
    cards = "".join(_shopify_card(n, *p) for n, p in enumerate(PRODUCTS))
    menu = "".join(
        f'<li><a href="/collections/{m.lower()}" class="header__menu-item list-menu__item '
        f'link link--text focus-inset"><span>{m}</span></a></li>'
        for m in ["Home", "Catalog", "Prints", "Toys", "Books", "Apparel", "Contact"]
    )
    facets = "".join(
        f'<li class="list-menu__item facets__item"><label for="Filter-type-{n}" class='
        f'"facet-checkbox"><input type="checkbox" name="filter.p.product_type" value="{t}" '
        f'id="Filter-type-{n}"><span class="facet-checkbox__text-label">{t} ({c})</span>'
        "</label></li>"
        for n, (t, c) in enumerate(
            [
                ("Homeware", 3),
                ("Toys", 2),
                ("Prints", 1),
                ("Books", 1),
                ("Accessories", 4),
                ("Stationery", 1),
            ]
        )
    )
    footer_links = "".join(
        f'<li><a href="/pages/{p.lower().replace(" ", "-")}" class="link list-menu__item--'
        f'link">{p}</a></li>'
        for p in ["Search", "Shipping policy", "Refund policy", "Terms of service", "About us"]
    )
    return (
        '<!doctype html>\n<html class="no-js" lang="en"><head><meta charset="utf-8">'
        "<title>Zebra gifts – Zebra Goods</title>"
        '<link rel="canonical" href="https://zebra-goods.example.com/collections/zebra-gifts">'
        '<meta property="og:url" content="https://zebra-goods.example.com/collections/zebra-'
        f'gifts">{STYLE}</head><body class="gradient animate--hover-default">'
        '<a class="skip-to-content-link button visually-hidden" href="#MainContent">Skip to '
        'content</a><div class="announcement-bar" role="region" aria-label="Announcement">'
        '<p class="announcement-bar__message h5"><span>Free shipping on orders over $50</span>'
        '</p></div><div id="shopify-section-header" class="shopify-section section-header">'
        '<sticky-header class="header-wrapper color-scheme-1 gradient"><header class="header '
        'header--middle-left page-width header--has-menu"><h1 class="header__heading"><a href'
        '="/" class="header__heading-link link link--text focus-inset"><span class="h2">Zebra '
        'Goods</span></a></h1><nav class="header__inline-menu"><ul class="list-menu list-'
        f'menu--inline" role="list">{menu}</ul></nav><div class="header__icons"><details-modal '
        'class="header__search"><details><summary class="header__icon header__icon--search" '
        'aria-haspopup="dialog" aria-label="Search"><span>Search</span></summary><div class='
        '"search-modal modal__content"><form action="/search" method="get" role="search" class'
        '="search search-modal__form"><input class="search__input field__input" id="Search-In-'
        'Modal" type="search" name="q" placeholder="Search"></form></div></details></details-'
        'modal><a href="/account/login" class="header__icon header__icon--account link focus-'
        'inset"><span class="visually-hidden">Log in</span></a><a href="/cart" class="header__'
        'icon header__icon--cart link focus-inset" id="cart-icon-bubble"><span class="visually'
        '-hidden">Cart</span></a></div></header></sticky-header></div>'
        '<main id="MainContent" class="content-for-layout focus-none" role="main" tabindex="-1">'
        '<div class="collection-hero"><div class="collection-hero__inner page-width"><div class'
        '="collection-hero__text-wrapper"><h1 class="collection-hero__title"><span class='
        '"visually-hidden">Collection: </span>Zebra gifts</h1><div class="collection-hero__'
        'description rte">Presents for anyone who loves stripes, from mugs to field guides.'
        '</div></div></div></div><div class="facets-vertical page-width"><aside aria-labelledby'
        '="verticalTitle" class="facets-wrapper" id="main-collection-filters"><facet-filters-'
        'form class="facets small-hide"><form id="FacetFiltersForm" class="facets__form-'
        'vertical"><div id="verticalTitle" class="facets__heading caption-large text-body h3">'
        'Filter:</div><details class="facets__disclosure-vertical"><summary class="facets__'
        'summary caption-large focus-offset"><span>Product type</span></summary><div class='
        f'"facets__display-vertical"><fieldset><ul class="facets__list list-unstyled">{facets}'
        "</ul></fieldset></div></details></form></facet-filters-form></aside>"
        '<div class="product-grid-container" id="ProductGridContainer"><div class="collection '
        'page-width"><div class="loading-overlay gradient"></div><ul id="product-grid" data-id'
        '="template--1__product-grid" class="grid product-grid grid--2-col-tablet-down grid--'
        f'4-col-desktop">{cards}</ul></div></div></div></main>'
        '<footer class="footer color-scheme-1 gradient section-sections--footer-padding">'
        '<div class="footer__content-top page-width"><div class="footer__blocks-wrapper grid"><'
        'div class="footer-block grid__item footer-block--menu"><h2 class="footer-block__'
        f'heading inline-richtext">Quick links</h2><ul class="footer-block__details-content list'
        f'-unstyled">{footer_links}</ul></div></div><div class="footer-block--newsletter"><div '
        'class="footer-block__newsletter"><h2 class="footer-block__heading inline-richtext">'
        'Subscribe to our emails</h2><form method="post" action="/contact#ContactFooter" id='
        '"ContactFooter" class="footer__newsletter newsletter-form"><input type="email" name='
        '"contact[email]" placeholder="Email"><button type="submit" class="newsletter-form__'
        'button field__button" name="commit">Subscribe</button></form></div></div></div>'
        '<div class="footer__content-bottom"><div class="footer__copyright caption"><small '
        'class="copyright__content">© 2024, <a href="/" title="">Zebra Goods</a></small><small'
        ' class="copyright__content"><a target="_blank" rel="nofollow" href="https://www.'
        'shopify.com?utm_campaign=poweredby">Powered by Shopify</a></small></div></div>'
        f"</footer>{SCRIPT}</body></html>"
    ).encode()


# --- a Sphinx page in the Read the Docs theme -----------------------------------------

DOC_INTRO = (
    "Stripecount reads the configuration once at start-up, from the file named by the "
    "STRIPECOUNT_CONFIG environment variable."
)
DOC_NOTE = "Relative paths in the file are resolved against the file's own directory."
DOC_PARAM = "the number of worker threads; zero means one per core"


def sphinx_page() -> bytes:
    toctree = "".join(
        f'<li class="toctree-l1{" current" if t == "Configuration" else ""}"><a class='
        f'"reference internal{" current" if t == "Configuration" else ""}" '
        f'href="{t.lower().replace(" ", "-")}.html">{t}</a></li>'
        for t in [
            "Getting started",
            "Installing on Linux",
            "Configuration",
            "Command line",
            "Tutorial: counting herds",
            "Changelog",
            "Contributing",
        ]
    )
    table_rows = "".join(
        f'<tr class="row-{"odd" if n % 2 else "even"}"><td><p><code class="docutils literal '
        f'notranslate"><span class="pre">{k}</span></code></p></td><td><p>{d}</p></td><td><p>'
        f"{v}</p></td></tr>"
        for n, (k, d, v) in enumerate(
            [
                ("threads", DOC_PARAM, "0"),
                ("cache_dir", "where decoded frames are kept between runs", "~/.cache/stripecount"),
                ("min_stripe_px", "narrowest stripe counted, in pixels", "3"),
            ]
        )
    )
    return (
        '<!DOCTYPE html>\n<html class="writer-html5" lang="en" data-content_root="./"><head>'
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-'
        'scale=1.0"><title>Configuration — Stripecount 2.4 documentation</title>'
        '<link rel="stylesheet" href="_static/css/theme.css" type="text/css">'
        '<link rel="canonical" href="https://stripecount.readthedocs.io/en/latest/'
        f'configuration.html">{STYLE}</head><body class="wy-body-for-nav">'
        '<div class="wy-grid-for-nav"><nav data-toggle="wy-nav-shift" class="wy-nav-side">'
        '<div class="wy-side-scroll"><div class="wy-side-nav-search"><a href="index.html" '
        'class="icon icon-home">Stripecount</a><div class="version">2.4</div><div role="search">'
        '<form id="rtd-search-form" class="wy-form" action="search.html" method="get"><input '
        'type="text" name="q" placeholder="Search docs" aria-label="Search docs"></form></div>'
        '</div><div class="wy-menu wy-menu-vertical" data-spy="affix" role="navigation" aria-'
        'label="Navigation menu"><p class="caption" role="heading"><span class="caption-text">'
        f'User guide</span></p><ul class="current">{toctree}</ul></div></div></nav>'
        '<section data-toggle="wy-nav-shift" class="wy-nav-content-wrap"><nav class="wy-nav-'
        'top" aria-label="Mobile navigation menu"><i data-toggle="wy-nav-top" class="fa fa-'
        'bars"></i><a href="index.html">Stripecount</a></nav><div class="wy-nav-content"><div '
        'class="rst-content"><div role="navigation" aria-label="Page navigation"><ul class="wy-'
        'breadcrumbs"><li><a href="index.html" class="icon icon-home" aria-label="Home"></a>'
        '</li><li class="breadcrumb-item active">Configuration</li><li class="wy-breadcrumbs-'
        'aside"><a href="_sources/configuration.rst.txt" rel="nofollow"> View page source</a>'
        '</li></ul><hr></div><div role="main" class="document" itemscope="itemscope" itemtype'
        '="http://schema.org/Article"><div itemprop="articleBody"><section id="configuration">'
        '<h1>Configuration<a class="headerlink" href="#configuration" title="Link to this '
        f'heading">¶</a></h1><p>{DOC_INTRO}</p><div class="highlight-toml notranslate"><div '
        'class="highlight"><pre><span></span><span class="k">[counting]</span>\n<span class='
        '"n">threads</span><span class="w"> </span><span class="o">=</span><span class="w"> '
        '</span><span class="mi">4</span>\n<span class="n">min_stripe_px</span><span class="w">'
        ' </span><span class="o">=</span><span class="w"> </span><span class="mi">3</span>\n'
        '</pre></div></div><div class="admonition note"><p class="admonition-title">Note</p>'
        f'<p>{DOC_NOTE}</p></div><section id="options"><h2>Options<a class="headerlink" href="'
        '#options" title="Link to this heading">¶</a></h2><table class="docutils align-default">'
        '<thead><tr class="row-odd"><th class="head"><p>Key</p></th><th class="head"><p>Meaning'
        f'</p></th><th class="head"><p>Default</p></th></tr></thead><tbody>{table_rows}</tbody>'
        '</table></section><section id="api"><h2>API<a class="headerlink" href="#api" title="'
        'Link to this heading">¶</a></h2><dl class="py function"><dt class="sig sig-object py"'
        ' id="stripecount.configure"><span class="sig-prename descclassname"><span class="pre">'
        'stripecount.</span></span><span class="sig-name descname"><span class="pre">configure'
        '</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n">'
        '<span class="pre">threads</span></span><span class="o"><span class="pre">=</span></span>'
        '<span class="default_value"><span class="pre">0</span></span></em><span class="sig-'
        'paren">)</span><a class="headerlink" href="#stripecount.configure" title="Link to this'
        ' definition">¶</a></dt><dd><p>Apply settings before the first count.</p><dl class='
        '"field-list simple"><dt class="field-odd">Parameters<span class="colon">:</span></dt>'
        '<dd class="field-odd"><p><strong>threads</strong> (<em>int</em>) – '
        f"{DOC_PARAM}</p></dd></dl></dd></dl></section></section></div></div>"
        '<footer><div class="rst-footer-buttons" role="navigation" aria-label="Footer"><a href'
        '="installing-on-linux.html" class="btn btn-neutral float-left" title="Installing on '
        'Linux" accesskey="p" rel="prev"><span class="fa fa-arrow-circle-left" aria-hidden="'
        'true"></span> Previous</a><a href="command-line.html" class="btn btn-neutral float-'
        'right" title="Command line" accesskey="n" rel="next">Next <span class="fa fa-arrow-'
        'circle-right" aria-hidden="true"></span></a></div><hr><div role="contentinfo"><p>'
        '© Copyright 2024, The Stripecount Authors.</p></div>Built with <a href="https://www.'
        'sphinx-doc.org/">Sphinx</a> using a <a href="https://github.com/readthedocs/sphinx_'
        'rtd_theme">theme</a> provided by <a href="https://readthedocs.org">Read the Docs</a>.'
        f"</footer></div></div></section></div>{SCRIPT}</body></html>"
    ).encode()


PAGES = [
    WebPage(
        "zebra - Google Search.html",
        google_results_page,
        "search results",
        "page content",
        (
            *(title for _, title, _ in RESULTS),
            *(snippet for _, _, snippet in RESULTS),
            *(question for question, _ in QUESTIONS),
            QUESTIONS[0][1],
            "https://www.sandiegozoo.org/animals/zebra",
        ),
        ("Send feedback", "Gmail", "var _g1"),
    ),
    WebPage(
        "Zebra - Wikipedia.html",
        wikipedia_article,
        "article",
        "main content",
        (WIKI_LEAD.split(" ", 1)[1][:60], WIKI_SECTION, *WIKI_PARAGRAPHS),
        ("Afrikaans", "IsiXhosa", "Learn to edit", "Cookie statement", "Create account"),
    ),
    WebPage(
        "Hand-rearing a zebra foal - Hoofstock Keepers Forum.html",
        phpbb_thread,
        "forum thread",
        "page content",
        tuple(text for _, text in POSTS) + tuple({author for author, _ in POSTS}),
        ("Powered by", "Delete cookies", "Frequently Asked Questions"),
    ),
    WebPage(
        "Zebra gifts – Zebra Goods.html",
        shopify_collection,
        "listing",
        "page content",
        (
            *(name for name, _ in PRODUCTS),
            *(f"${price} USD" for _, price in PRODUCTS),
            "Presents for anyone who loves stripes",
        ),
        ("Subscribe to our emails", "Refund policy", "Powered by Shopify"),
    ),
    WebPage(
        "Configuration — Stripecount 2.4 documentation.html",
        sphinx_page,
        "article",
        "main content",
        (DOC_INTRO, DOC_NOTE, DOC_PARAM, "min_stripe_px", "Apply settings before the first count"),
        ("Tutorial: counting herds", "Built with", "View page source", "Search docs"),
    ),
]
