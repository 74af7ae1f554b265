"""The attention views' JavaScript is ES modules, each importing what it uses from the module that
exports it: no shared global scope. The notebook's and the standalone page's one file is made from
those modules when the package is imported, and Streamlit serves the modules themselves. Nothing
in them loads anything from the network or writes data as markup."""

import re

import pytest

from headscope.ui.attention import bundle

MODULES = bundle.MODULES


@pytest.mark.parametrize("name", MODULES)
def test_each_module_imports_by_name_what_another_module_exports(name):
    src = bundle.source(name)
    for mod, names in bundle.imports(name).items():
        assert mod in MODULES and mod != name
        assert set(names) <= bundle.exports(mod), (name, mod)
    # every import line is one bundle() understands (it drops exactly these when it joins them)
    assert len(re.findall(r"^import ", src, flags=re.M)) == len(bundle.imports(name))
    assert "import(" not in src  # no dynamic import: the graph is what the lines say


@pytest.mark.parametrize("name", MODULES)
def test_each_top_level_statement_declares_one_name(name):
    """`const A = 1, B = 2` would hide B from bundle.DECLARED, and so from the checks below."""
    for line in re.findall(r"^(?:export )?(?:const|let|var) [^\n]*", bundle.source(name), re.M):
        head = line.split("=>")[0]  # an arrow function's parameters are not declarations
        assert not re.search(r"[,;]\s*[A-Za-z_$][\w$]*\s*=(?!=)", re.sub(
            r"\([^()]*\)|\{[^{}]*\}|\[[^\[\]]*\]|\"[^\"]*\"", "", head)), line


def test_no_module_relies_on_a_name_it_does_not_import_or_declare():
    """Each core module run alone in a scope holding only its imports: a name another module
    declares but this one neither imports nor declares would be a global shared by
    concatenation, which the modules must not need."""
    declared = {name: set(bundle.DECLARED.findall(bundle.source(name))) for name in MODULES}
    everyone = set().union(*declared.values())
    for name in MODULES:
        code = re.sub(r"//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", "",
                      bundle.source(name))
        code = re.sub(r"([{,]\s*)[A-Za-z_$][\w$]*\s*:(?!:)", r"\1", code)  # object keys
        used = set(re.findall(r"(?<![\w$.])([A-Za-z_$][\w$]*)", code))  # not x.name
        imported = {n for names in bundle.imports(name).values() for n in names}
        stray = used & everyone - declared[name] - imported
        assert not stray, (name, sorted(stray))


def test_the_one_file_modules_are_the_modules_joined():
    for host in bundle.HOSTS:
        one = bundle.bundle(host)
        assert not re.search(r"^import ", one, flags=re.M)
        assert len(re.findall(r"^export default", one, flags=re.M)) == 1
        assert not re.search(r"^export (?!default)", one, flags=re.M)
        for name in bundle.CORE + (host,):
            body = bundle.IMPORT.sub("", bundle.source(name))
            assert bundle.EXPORT.sub("", body) in one, name
        other = next(h for h in bundle.HOSTS if h != host)
        assert bundle.source(other) not in one


def test_a_name_declared_twice_or_an_import_not_exported_is_refused(monkeypatch):
    real = bundle.source.__wrapped__
    for bad in ('import { nothingHere } from "./core.js";\nexport default 1;\n',
                "function decode(d) { return d; }\nexport default 1;\n"):
        bundle.bundle.cache_clear()
        monkeypatch.setattr(bundle, "source",
                            lambda name, bad=bad: bad if name == "host_bad.js" else real(name))
        with pytest.raises(ValueError):
            bundle.bundle("host_bad.js")
    bundle.bundle.cache_clear()


def test_no_network_and_no_markup_from_data():
    for name in MODULES:
        src = bundle.source(name)
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", src)  # no CDN, no fetch
        assert all(mod.startswith("./") for mod in re.findall(r'from "([^"]+)"', src))
        assert "innerHTML" not in src and "insertAdjacentHTML" not in src


def test_the_package_ships_the_modules_streamlit_serves():
    """The manifest's asset folder is js/, and it holds the modules and the CSS only."""
    import tomllib

    manifest = tomllib.loads((bundle.JS.parent.parent.parent / "pyproject.toml").read_text())
    asset = manifest["tool"]["streamlit"]["component"]["components"][0]["asset_dir"]
    assert (bundle.JS.parent.parent.parent / asset).resolve() == bundle.JS
    assert {p.name for p in bundle.JS.iterdir() if p.is_file()} == {*MODULES, bundle.CSS_FILE}
