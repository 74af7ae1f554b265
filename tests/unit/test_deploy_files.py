"""deploy/: the YAML parses and says what the deployment needs (health probes, sticky sessions,
names that agree), and the nginx template renders, as compose would, into a configuration
nginx accepts. Compose and Kubernetes themselves are not run here (no container engine, no
cluster); the nginx layout runs for real in tests/browser/test_proxy.py."""

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from testkit.proxy import NGINX
from testkit.server import free_port
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
TEMPLATE = DEPLOY / "nginx" / "headscope.conf.template"
HEALTH = "/_stcore/health"


def load_all(path: Path) -> list:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


@pytest.fixture(scope="module")
def k8s() -> dict:
    """{kind: manifest} of every file the kustomization lists."""
    kust = load_all(DEPLOY / "kubernetes" / "kustomization.yaml")[0]
    docs = [d for name in kust["resources"] for d in load_all(DEPLOY / "kubernetes" / name)]
    kinds = {d["kind"]: d for d in docs}
    assert len(kinds) == len(docs)  # one of each
    return kinds


@pytest.fixture(scope="module")
def compose() -> dict:
    return load_all(DEPLOY / "compose.yaml")[0]


def template_names() -> set:
    return set(re.findall(r"\$\{(\w+)\}", TEMPLATE.read_text()))


def test_every_yaml_file_parses():
    files = sorted(DEPLOY.rglob("*.yaml"))
    assert len(files) >= 6
    for f in files:
        assert load_all(f), f


def test_kubernetes_probes_ask_streamlit_health_on_the_container_port(k8s):
    pod = k8s["Deployment"]["spec"]["template"]
    container = pod["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        get = container[probe]["httpGet"]
        assert get["path"] == HEALTH and get["port"] in ports, probe
    assert ports["http"] == 8501  # the port `headscope run` serves in the Dockerfile
    assert container["resources"]["requests"]["cpu"]  # the autoscaler needs a CPU request
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["HEADSCOPE_TORCH_THREADS"] == "1"


def test_kubernetes_names_agree(k8s):
    deployment, service = k8s["Deployment"], k8s["Service"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    backend = k8s["Ingress"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"]["name"] == service["spec"]["ports"][0]["name"]
    target = k8s["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])


def test_ingress_pins_a_browser_to_its_pod_by_cookie_with_long_timeouts(k8s):
    ingress = k8s["Ingress"]
    notes = ingress["metadata"]["annotations"]
    assert ingress["spec"]["ingressClassName"] == "nginx"
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert notes["nginx.ingress.kubernetes.io/affinity-mode"] == "persistent"
    assert notes["nginx.ingress.kubernetes.io/session-cookie-name"]
    for timeout in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(notes[f"nginx.ingress.kubernetes.io/{timeout}"]) >= 3600


def test_autoscaler_follows_cpu(k8s):
    spec = k8s["HorizontalPodAutoscaler"]["spec"]
    assert 2 <= spec["minReplicas"] <= spec["maxReplicas"]
    (metric,) = spec["metrics"]
    assert metric["type"] == "Resource" and metric["resource"]["name"] == "cpu"
    assert 0 < metric["resource"]["target"]["averageUtilization"] <= 100


def test_compose_runs_replicas_behind_the_same_nginx_template(compose):
    app, proxy = compose["services"]["app"], compose["services"]["proxy"]
    assert (DEPLOY / app["build"]["context"] / "Dockerfile").exists()
    assert app["deploy"]["replicas"] >= 2
    assert HEALTH in " ".join(app["healthcheck"]["test"])
    mounts = [v.split(":") for v in proxy["volumes"]]
    assert [(DEPLOY / src).resolve() for src, dst, *_ in mounts
            if dst.startswith("/etc/nginx/templates/") and dst.endswith(".template")] \
        == [TEMPLATE]
    assert template_names() <= set(proxy["environment"])  # every name gets a value
    assert proxy["depends_on"]["app"]["condition"] == "service_healthy"
    assert proxy["ports"] == ["8501:8501"]


def test_template_pins_sessions_and_passes_websockets():
    text = TEMPLATE.read_text()
    conf = re.sub(r"#.*", "", text)  # directives only
    assert template_names() == {"HEADSCOPE_LISTEN", "HEADSCOPE_SERVERS",
                                "HEADSCOPE_CONN_PER_ADDRESS", "HEADSCOPE_CONN_PER_BROWSER",
                                "HEADSCOPE_FRAME_ANCESTORS", "HEADSCOPE_UPSTREAM_HEADER"}
    for name in template_names():  # once, in a directive: a value may span lines
        assert text.count("${" + name + "}") == conf.count("${" + name + "}") == 1
    assert re.search(r"hash \$headscope_key;", conf)  # plain: an even share (not ketama's)
    assert "proxy_http_version 1.1;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert "proxy_set_header Connection $headscope_connection;" in conf
    assert re.search(r"proxy_read_timeout 1d;", conf)
    assert re.search(r'"headscope_affinity=\$request_id; Path=/; HttpOnly; SameSite=Lax"', conf)


def test_template_rendered_as_compose_does_is_a_valid_nginx_configuration(tmp_path, compose):
    """envsubst of the proxy's environment, as the nginx image does, then `nginx -t`
    (with a local address in place of the "app" service name, which only compose resolves)."""
    require(NGINX is not None, "nginx is not installed (apt-get install nginx; .ci/run does)")
    env = compose["services"]["proxy"]["environment"]
    env = {**env, "HEADSCOPE_SERVERS": env["HEADSCOPE_SERVERS"].replace("app:", "127.0.0.1:")}
    site = re.sub(r"\$\{(HEADSCOPE_\w+)\}", lambda m: env[m.group(1)], TEMPLATE.read_text())
    (tmp_path / "temp").mkdir()
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nevents {{}}\nhttp {{\n"
        + "".join(f"    {kind}_temp_path {tmp_path}/temp/{kind};\n"
                  for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        + f"    include {tmp_path}/site.conf;\n}}\n")
    out = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                          "-e", str(tmp_path / "error.log")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


MAIN = DEPLOY / "nginx" / "nginx.conf"
MAX_REPLICAS = 8  # what deploy/nginx/nginx.conf says it is sized for


def directive(name: str) -> int:
    return int(re.search(rf"^\s*{name} (\d+);", MAIN.read_text(), re.M).group(1))


def test_compose_proxy_has_worker_connections_for_its_replicas(compose):
    """Not the nginx image's 1,024: serve_many's sizing for up to MAX_REPLICAS, one process."""
    from deploy.serve_many import worker_connections

    proxy = compose["services"]["proxy"]
    mounts = {dst: (DEPLOY / src).resolve() for src, dst, *_ in
              (v.split(":") for v in proxy["volumes"])}
    assert mounts["/etc/nginx/nginx.conf"] == MAIN
    assert compose["services"]["app"]["deploy"]["replicas"] <= MAX_REPLICAS
    assert directive("worker_processes") == 1  # worker_connections is then the proxy's total
    assert directive("worker_connections") >= worker_connections(MAX_REPLICAS) > 1024
    assert directive("worker_rlimit_nofile") >= directive("worker_connections") + 256
    assert proxy["ulimits"]["nofile"]["hard"] >= directive("worker_rlimit_nofile")


def test_compose_main_configuration_is_valid_for_nginx(tmp_path, compose):
    """`nginx -t` of deploy/nginx/nginx.conf with the rendered template where the image puts
    it, and paths of this machine in place of the image's (no user "nginx" here)."""
    require(NGINX is not None, "nginx is not installed (apt-get install nginx; .ci/run does)")
    (tmp_path / "temp").mkdir()
    site = tmp_path / "site.conf"
    site.write_text(f"server {{ listen 127.0.0.1:{free_port()}; return 204; }}\n")
    conf = (MAIN.read_text().replace("user nginx;", "")
            .replace("/var/log/nginx/", f"{tmp_path}/").replace("/var/run/", f"{tmp_path}/")
            .replace("/etc/nginx/conf.d/*.conf", str(site))
            .replace("http {", "http {\n" + "".join(
                f"    {kind}_temp_path {tmp_path}/temp/{kind};\n"
                for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))))
    (tmp_path / "nginx.conf").write_text(conf)
    out = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"),
                          "-e", str(tmp_path / "error.log")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
