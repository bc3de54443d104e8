// A fake of PubMed's E-utilities, served by the fake provider's server under /eutils: esearch and
// esummary answer in their real JSON formats, efetch in PubMed XML, over a fixed corpus of
// fictitious articles (deterministic: the same query always finds the same ones). Faults:
// `status` (an HTTP error) or `down` (the connection is dropped).

const TOPICS = [
  ["EGFR", "resistance", "osimertinib", "lung cancer"],
  ["KRAS", "G12C", "sotorasib", "colorectal"],
  ["PD-1", "immunotherapy", "melanoma", "response"],
  ["heat pumps", "retrofit", "energy", "old houses"],
];
const YEARS = [2023, 2021, 2023, 2022, 2019, 2023, 2020, 2024, 2023, 2022, 2018, 2023, 2021, 2017, 2022];
const JOURNALS = ["Fixture J Oncol", "Fixture Lung", "Fixture Energy Rev", "Fixture Clin Trials"];

/** The corpus: 60 articles, PMIDs 39000001 upwards. */
export const CORPUS = Array.from({ length: 60 }, (_, i) => {
  const topic = TOPICS[i % TOPICS.length];
  const year = YEARS[i % YEARS.length];
  const pmid = String(39000001 + i);
  return {
    pmid,
    year,
    journal: JOURNALS[i % JOURNALS.length],
    title: `Fixture study ${i + 1}: ${topic[0]} ${topic[1]} with ${topic[2]} in ${topic[3]}.`,
    abstract: [
      ["BACKGROUND", `How ${topic[0]} ${topic[1]} develops under ${topic[2]} is unclear (fixture ${i + 1}).`],
      ["RESULTS", `In ${100 + i} cases of ${topic[3]}, ${topic[1]} was seen in ${10 + (i % 30)}% (p < 0.05) & more.`],
    ],
    authors: [`Author${i} A`, `Coauthor${i} B`],
  };
});

/** The words of a PubMed query: field tags, operators, quotes and brackets removed. */
function words(term) {
  return term
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/["()]/g, " ")
    .split(/\s+/)
    .filter((w) => w && !["AND", "OR", "NOT"].includes(w))
    .map((w) => w.toLowerCase());
}

/** Articles matching a query (any of its words in title or abstract), best first; then the
 * date range and the order. */
function search(params) {
  const terms = words(params.get("term") ?? "");
  const min = Number((params.get("mindate") ?? "0").slice(0, 4));
  const max = Number((params.get("maxdate") ?? "9999").slice(0, 4));
  const scored = CORPUS.map((a) => {
    const text = `${a.title} ${a.abstract.map((p) => p[1]).join(" ")}`.toLowerCase();
    return { a, score: terms.filter((t) => text.includes(t)).length };
  })
    .filter(({ a, score }) => score > 0 && a.year >= min && a.year <= max)
    .sort((x, y) => y.score - x.score || x.a.pmid.localeCompare(y.a.pmid));
  const found = scored.map(({ a }) => a);
  if (params.get("sort") === "pub_date") found.sort((x, y) => y.year - x.year || x.pmid.localeCompare(y.pmid));
  return found;
}

const escapeXml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Answers an E-utilities request; `state` holds the request log and the fault to inject. */
export function handleEutils(req, res, state) {
  const url = new URL(req.url, "http://fake");
  state.requests.push({ path: url.pathname, params: Object.fromEntries(url.searchParams), at: Date.now() });
  if (state.fault?.down) return res.socket.destroy();
  if (state.fault?.status) {
    res.writeHead(state.fault.status, { "content-type": "application/json" });
    return res.end(JSON.stringify({ error: "API rate limit exceeded" }));
  }
  const params = url.searchParams;
  if (url.pathname.endsWith("/esearch.fcgi")) {
    const found = search(params);
    const start = Number(params.get("retstart") ?? 0);
    const page = found.slice(start, start + Number(params.get("retmax") ?? 20));
    const body = { header: { type: "esearch", version: "0.3" }, esearchresult: { count: String(found.length), retmax: String(page.length), retstart: String(start), idlist: page.map((a) => a.pmid), translationset: [], querytranslation: params.get("term") } };
    res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
    return res.end(JSON.stringify(body));
  }
  const ids = (params.get("id") ?? "").split(",").filter(Boolean);
  if (url.pathname.endsWith("/esummary.fcgi")) {
    const result = { uids: ids };
    for (const id of ids) {
      const a = CORPUS.find((x) => x.pmid === id);
      result[id] = a
        ? { uid: id, pubdate: `${a.year} Mar 1`, source: a.journal, authors: a.authors.map((name) => ({ name, authtype: "Author", clusterid: "" })), title: a.title, articleids: [{ idtype: "pubmed", idtypen: 1, value: id }, { idtype: "doi", idtypen: 3, value: `10.0000/fixture.${id}` }], fulljournalname: a.journal }
        : { uid: id, error: "cannot get document summary" };
    }
    res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
    return res.end(JSON.stringify({ header: { type: "esummary", version: "0.3" }, result }));
  }
  if (url.pathname.endsWith("/efetch.fcgi")) {
    const articles = ids.map((id) => CORPUS.find((x) => x.pmid === id)).filter(Boolean);
    const xml = articles
      .map(
        (a) => `<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">${a.pmid}</PMID><Article PubModel="Print"><Journal><JournalIssue CitedMedium="Internet"><PubDate><Year>${a.year}</Year></PubDate></JournalIssue><Title>${escapeXml(a.journal)}</Title></Journal><ArticleTitle>${escapeXml(a.title)}</ArticleTitle><Abstract>${a.abstract.map(([label, text]) => `<AbstractText Label="${label}" NlmCategory="${label}">${escapeXml(text)}</AbstractText>`).join("")}</Abstract></Article></MedlineCitation></PubmedArticle>`,
      )
      .join("\n");
    res.writeHead(200, { "content-type": "text/xml; charset=UTF-8" });
    return res.end(`<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2024//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_240101.dtd">\n<PubmedArticleSet>\n${xml}\n</PubmedArticleSet>\n`);
  }
  res.writeHead(404, { "content-type": "text/plain" });
  res.end("unknown E-utility");
}
