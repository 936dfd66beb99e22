"""The style of fluxgui's HTML export: inline CSS (no external resource), and the
Content-Security-Policy that forbids scripts, images and every fetch."""

CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d2126}
main{max-width:920px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 16px}
section{margin:0 0 32px}
h2{font-size:18px;margin:24px 0 4px;word-break:break-all}
.when{color:#5f6b7a;font-size:13px;margin:0 0 12px}
.review{border-left:4px solid #0b4f8a;background:#eef5fc;padding:4px 10px;margin:0 0 12px;font-size:13px}.review p{margin:4px 0}
article{background:#fff;border:1px solid #dde1e6;border-left:4px solid #8a94a3;border-radius:6px;margin:0 0 10px;padding:8px 12px}
article.user{border-left-color:#2f6fde}
article.assistant{border-left-color:#1f9d55}
article.system,article.developer{border-left-color:#8e59c9}
article.tool{border-left-color:#d9822b}
article header{font-size:12px;color:#5f6b7a;margin:0 0 4px}
article header b{color:#1d2126;font-size:13px}
pre{white-space:pre-wrap;word-wrap:break-word;margin:0;font:13px/1.45 ui-monospace,Menlo,Consolas,monospace}
.text{white-space:pre-wrap;word-wrap:break-word}
.kind{background:#eef1f4;border-radius:3px;padding:0 5px;margin-left:6px}
details{margin-top:6px;font-size:12px}
@media (prefers-color-scheme:dark){body{background:#16181c;color:#e3e6ea}article{background:#1f2328;border-color:#343a42}
article header b{color:#e3e6ea}.kind{background:#2c3138}}
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'"
