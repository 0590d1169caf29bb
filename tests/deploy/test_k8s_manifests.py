"""deploy/k8s/: the network policies isolate what they say, every pod is bounded, no secrets."""

from __future__ import annotations

import pytest
import yaml
from deploy_checks import DEPLOY, quantity, secret_literals, yaml_documents

MANIFESTS = sorted((DEPLOY / "k8s").glob("*.yaml"))
VALUES = yaml.safe_load((DEPLOY / "helm" / "values.yaml").read_text())
RUN_POD_LABELS = (VALUES["runLauncher"]["config"]["k8sRunLauncher"]["runK8sConfig"]
                  ["podTemplateSpecMetadata"]["labels"])


def objects(kind: str) -> list[dict]:
    return [doc for path in MANIFESTS for doc in yaml_documents(path) if doc["kind"] == kind]


def policy(name: str) -> dict:
    (found,) = [p for p in objects("NetworkPolicy") if p["metadata"]["name"] == name]
    return found


def selects(selector: dict, labels: dict) -> bool:
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items()) and \
        not selector.get("matchExpressions")


def test_every_manifest_parses_and_lives_in_the_namespace():
    assert MANIFESTS
    for path in MANIFESTS:
        for doc in yaml_documents(path):
            assert doc["apiVersion"] and doc["kind"], path
            assert doc["metadata"]["namespace"] == "cataloger", path
            assert doc["kind"] != "Secret", f"{path}: Secrets are made outside the repository"
            assert secret_literals(doc) == [], path


def test_the_sandbox_has_no_egress_and_only_its_run_pod_may_reach_it():
    sandbox = policy("cataloger-sandbox")
    (pod,) = objects("Pod")
    assert selects(sandbox["spec"]["podSelector"], pod["metadata"]["labels"])
    assert set(sandbox["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    assert sandbox["spec"]["egress"] == []              # present and empty: all egress denied
    sources = [peer for rule in sandbox["spec"]["ingress"] for peer in rule["from"]]
    assert sources and all(set(peer) == {"podSelector"} for peer in sources)
    assert all(selects(peer["podSelector"], RUN_POD_LABELS) for peer in sources)


def test_run_pods_take_no_connections_and_reach_only_named_ports():
    run = policy("cataloger-run")
    assert selects(run["spec"]["podSelector"], RUN_POD_LABELS)
    assert set(run["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    assert run["spec"]["ingress"] == []
    for rule in run["spec"]["egress"]:
        assert rule.get("to") and rule.get("ports"), f"an egress rule open to everything: {rule}"
        for peer in rule["to"]:
            assert peer.get("ipBlock", {}).get("cidr") != "0.0.0.0/0", rule
    ports = {p["port"] for rule in run["spec"]["egress"] for p in rule["ports"]}
    assert ports <= {53, 443, 3306, 5432}


def test_the_sandbox_pod_is_locked_down_and_bounded():
    (pod,) = objects("Pod")
    spec = pod["spec"]
    assert spec["automountServiceAccountToken"] is False
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    assert spec["activeDeadlineSeconds"] > 0
    for container in spec["containers"]:
        sc = container["securityContext"]
        assert sc["readOnlyRootFilesystem"] and sc["allowPrivilegeEscalation"] is False
        assert sc["capabilities"]["drop"] == ["ALL"]
        assert {"cpu", "memory"} <= set(container["resources"]["limits"])
    assert all(v.get("emptyDir", {}).get("sizeLimit") for v in spec["volumes"])


def test_every_container_gets_limits_and_the_namespace_fits_the_run_queue():
    (limit_range,) = objects("LimitRange")
    (container,) = [lim for lim in limit_range["spec"]["limits"] if lim["type"] == "Container"]
    assert {"cpu", "memory"} <= set(container["default"]) and {"cpu", "memory"} <= set(container["defaultRequest"])
    (quota,) = objects("ResourceQuota")
    hard = quota["spec"]["hard"]
    runs = VALUES["concurrency"]["runs"]["maxConcurrentRuns"]
    run_pod = VALUES["runLauncher"]["config"]["k8sRunLauncher"]["resources"]
    # the quota must not be what stops the queue's runs: run pods plus the long-running ones
    others = len(VALUES["dagster-user-deployments"]["deployments"]) + 2
    assert int(hard["pods"]) >= runs + others
    for kind in ("requests", "limits"):
        for resource in ("cpu", "memory"):
            needed = runs * quantity(run_pod[kind][resource])
            assert quantity(hard[f"{kind}.{resource}"]) >= needed, f"{kind}.{resource}"


@pytest.mark.parametrize("leak", [
    {"kind": "Pod", "spec": {"containers": [{"env": [{"name": "PGPASSWORD", "value": "x"}]}]}},
    {"kind": "ConfigMap", "data": {"url": "mysql://u:p@db/x"}},
])
def test_a_secret_in_a_manifest_is_caught(leak):
    assert secret_literals(leak)
