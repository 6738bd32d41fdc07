"""report.html: one self-contained page (plots embedded as data: URIs) with, per experiment,
the paper's setup, its figures beside ours, our plots, what changed and what was skipped.

The page checks itself when opened: a script confirms every image decoded and every table has
rows, and writes the outcome into ``<body data-lab-check="...">`` (``ok`` or the problems), which
tests read through a headless browser's DOM dump.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from gpucrypt.lab.papers import FIGURES, PAPERS, SETUPS

STYLE = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1400px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-top: 2px solid #ccc; padding-top: .8em; }
table { border-collapse: collapse; font-size: 12px; margin: .4em 0 1em; }
td, th { border: 1px solid #bbb; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #eee; } caption { text-align: left; font-weight: bold; padding: 2px 0; }
.side { display: flex; gap: 2em; flex-wrap: wrap; align-items: flex-start; }
.side > div { flex: 1 1 45%; min-width: 420px; overflow-x: auto; }
.status-ran { color: #060; } .status-partial { color: #a60; } .status-skipped { color: #666; }
.status-failed { color: #b00; } img { max-width: 100%; border: 1px solid #ddd; margin: 4px 0; }
.cite { color: #555; font-size: 12px; } .skip { color: #a60; font-size: 13px; }
.verdict { background: #f4f7fb; border-left: 4px solid #4a7ab5; padding: .4em .8em; margin: .5em 0; }
.verdict p { margin: .2em 0; } .warning { background: #fff3e0; border-left: 4px solid #d27b00; padding: .4em .8em; }
"""

# The self-check: images decoded, tables with rows, no script error; the result lands in the DOM.
CHECK_SCRIPT = """
window.labErrors = [];
window.addEventListener('error', function (e) { window.labErrors.push('script error: ' + e.message); });
function labCheck() {
  var problems = window.labErrors.slice();
  var images = document.querySelectorAll('img');
  for (var i = 0; i < images.length; i++) {
    if (!images[i].complete || images[i].naturalWidth === 0) problems.push('broken image ' + images[i].alt);
  }
  var tables = document.querySelectorAll('table');
  for (var j = 0; j < tables.length; j++) {
    if (tables[j].querySelectorAll('tbody tr').length === 0) problems.push('empty table ' + (j + 1));
  }
  if (tables.length === 0) problems.push('no tables');
  var sections = document.querySelectorAll('section[data-status="ran"], section[data-status="partial"]');
  for (var k = 0; k < sections.length; k++) {
    if (!sections[k].querySelector('.verdict')) problems.push('no verdict in ' + sections[k].id);
  }
  document.body.setAttribute('data-lab-check', problems.length ? problems.join('; ') : 'ok');
  document.getElementById('lab-check').textContent = problems.length ? 'page check: ' + problems.join('; ')
    : 'page check: ok (' + images.length + ' images, ' + tables.length + ' tables)';
}
window.addEventListener('load', labCheck);
"""


def _esc(value) -> str:
    return html.escape("" if value is None else str(value))


def _table(table: dict) -> str:
    head = "".join(f"<th>{_esc(c)}</th>" for c in table["columns"])
    rows = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in row) + "</tr>" for row in table["rows"])
    return f"<table><caption>{_esc(table['title'])}</caption><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{_esc(path.name)}" src="data:image/png;base64,{data}">'


def _machine(results: dict) -> str:
    m = results["machine"]
    gpus = [d for d in m["devices"] if d.get("type") == "gpu"]   # every GPU the library lists, any backend
    rows = [["date", results["date"]], ["host", m["hostname"]], ["CPU", f"{m['cpu']} ({m['logical_cpus']} logical CPUs)"],
            ["memory", f"{(m['memory_bytes'] or 0) / 2**30:.0f} GiB"],
            ["GPUs", ", ".join(f"{d['name']}: {d['description']}" for d in gpus) or "none"],
            ["device used", results["device"]], ["run", "quick (reduced sizes and repetitions)" if results["quick"] else "full"],
            ["versions", ", ".join(f"{k} {v}" for k, v in m["versions"].items())]]
    return _table({"title": "this machine", "columns": ["", ""], "rows": rows})


def _verdicts(exp: dict) -> str:
    """The opening: paper / here / same quantity? / conclusion, one block per question asked."""
    blocks = []
    for v in exp.get("verdicts", []):
        title = f"<p><b>{_esc(v['part'])}</b></p>" if v.get("part") else ""
        blocks.append(f'<div class="verdict">{title}<p><b>paper:</b> {_esc(v["paper"])}</p>'
                      f'<p><b>here:</b> {_esc(v["here"])}</p><p><b>same quantity?</b> {_esc(v["same"])}</p>'
                      f'<p><b>conclusion:</b> {_esc(v["conclusion"])}</p></div>')
    blocks += [f'<p class="warning"><b>warning:</b> {_esc(w)}</p>' for w in exp.get("warnings", [])]
    return "".join(blocks)


def _section(out: Path, exp: dict) -> str:
    parts = [f'<h2>{_esc(exp["name"])}: {_esc(exp["title"])} '
             f'<span class="status-{exp["status"]}">[{exp["status"]}]</span></h2>',
             _verdicts(exp),
             f'<p class="cite">{_esc(PAPERS[exp["paper"]]["citation"])}</p>',
             f"<p><b>Their setup.</b> {_esc(SETUPS.get(exp['name'], ''))}</p>"]
    if exp["reason"]:
        parts.append(f'<p class="skip"><b>{_esc(exp["status"])}:</b> {_esc(exp["reason"])}</p>')
    theirs = "".join(_table(t) for t in FIGURES.get(exp["name"], []))
    ours = "".join(_table(t) for t in exp["tables"] if t["rows"]) or "<p>No measurement on this machine.</p>"
    parts.append(f'<div class="side"><div><h3>The paper</h3>{theirs}</div><div><h3>This machine</h3>{ours}</div></div>')
    parts += [_image(out / name) for name in exp["plots"] if (out / name).is_file()]
    if exp["changes"]:
        parts.append("<p><b>What changed and why.</b> " + " ".join(_esc(c) for c in exp["changes"]) + "</p>")
    if exp["skipped_parts"]:
        parts.append('<ul class="skip">' + "".join(f"<li>skipped {_esc(s['part'])}: {_esc(s['reason'])}</li>"
                                                 for s in exp["skipped_parts"]) + "</ul>")
    return (f'<section id="{_esc(exp["name"])}" data-status="{_esc(exp["status"])}">' + "\n".join(parts)
            + "</section>")


_EMBEDDED_IMAGE = re.compile(r'<img alt="([^"/\\]+\.png)" src="data:image/png;base64,([A-Za-z0-9+/=]+)">')


def unpack_plots(report_html: Path, out: Path) -> list:
    """Writes the PNG plots embedded in a report.html into ``out`` under their own names (the
    inverse of _image) and returns the names: a run merged into a committed report, which keeps
    only report.html and results.json, then renders the earlier experiments' plots too."""
    names = []
    for name, data in _EMBEDDED_IMAGE.findall(Path(report_html).read_text(encoding="utf-8")):
        (Path(out) / html.unescape(name)).write_bytes(base64.b64decode(data))
        names.append(html.unescape(name))
    return names


def write_report(out: Path, results: dict) -> Path:
    contents = "".join(f'<li><a href="#{_esc(e["name"])}">{_esc(e["name"])}</a> '
                       f'<span class="status-{e["status"]}">{_esc(e["status"])}</span></li>'
                       for e in results["experiments"])
    body = "\n".join(_section(out, exp) for exp in results["experiments"])
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>gpucrypt lab report</title>
<style>{STYLE}</style><script>{CHECK_SCRIPT}</script></head>
<body>
<h1>gpucrypt lab: the seed papers' experiments on this machine</h1>
<p id="lab-check">page check: not run (scripts disabled?)</p>
{_machine(results)}
<ul>{contents}</ul>
<p>Raw samples, repetitions and what each figure times: results.json beside this page.</p>
{body}
</body></html>
"""
    path = out / "report.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(path)
    return path
