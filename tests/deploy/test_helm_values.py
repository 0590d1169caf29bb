"""deploy/helm/values.yaml: the chart's keys, Dagster's own reading of the queue, no secrets.

The chart's values.schema.json is not vendored here: CHART is the part of it that this file
sets, transcribed from the chart's schema (helm/dagster/values.schema.json of
github.com/dagster-io/dagster at bdb8547f, and for `concurrency`, added later, its pydantic
source helm/dagster/schema/schema/charts/dagster/subschema/concurrency.py at 0f2d9d8e).
It is stricter than the chart: an unknown key fails at every level, so a misspelled key
(which Helm would silently ignore) fails here.  Kubernetes' own types (resources, security
contexts) are checked as objects only.
"""

from __future__ import annotations

import copy
import importlib.util

import dagster as dg
import jsonschema
import pytest
import yaml
from deploy_checks import DEPLOY, secret_literals

VALUES = DEPLOY / "helm" / "values.yaml"

K8S_OBJECT = {"type": "object"}
STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
NAME_REFS = {"type": "array", "items": {"type": "object", "required": ["name"]}}
OPT_INT = {"type": ["integer", "null"]}
OPT_BOOL = {"type": ["boolean", "null"]}


def obj(properties: dict, required: tuple = ()) -> dict:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


IMAGE = obj({"repository": {"type": "string"}, "tag": {"type": ["string", "integer", "null"]},
             "pullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]}}, ("repository", "pullPolicy"))
ENV = {"anyOf": [STRINGS, {"type": "array", "items": K8S_OBJECT}]}
POD = {k: K8S_OBJECT for k in ("nodeSelector", "affinity", "podSecurityContext", "securityContext",
                               "resources", "livenessProbe", "readinessProbe", "startupProbe", "annotations")}
POD["tolerations"] = {"type": "array"}

USER_DEPLOYMENT = obj({
    "name": {"type": "string"}, "image": IMAGE,
    "dagsterApiGrpcArgs": {"type": "array", "items": {"type": "string"}},
    "codeServerArgs": {"type": "array", "items": {"type": "string"}},
    "includeConfigInLaunchedRuns": obj({"enabled": {"type": "boolean"}}, ("enabled",)),
    "deploymentNamespace": {"type": "string"}, "port": {"type": "integer"}, "env": ENV,
    "envConfigMaps": NAME_REFS, "envSecrets": NAME_REFS, "labels": STRINGS,
    "volumeMounts": {"type": "array"}, "volumes": {"type": "array"}, "schedulerName": {"type": "string"},
    "initContainers": {"type": "array"}, "sidecarContainers": {"type": "array"}, **POD,
}, ("name", "image", "port"))

RUN_K8S_CONFIG = obj({k: {"type": ["object", "null"]} for k in (
    "containerConfig", "podSpecConfig", "podTemplateSpecMetadata", "jobSpecConfig", "jobMetadata")})

K8S_RUN_LAUNCHER = obj({
    "image": {"anyOf": [IMAGE, {"type": "null"}]},
    "imagePullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
    "jobNamespace": {"type": ["string", "null"]}, "loadInclusterConfig": {"type": "boolean"},
    "kubeconfigFile": {"type": ["string", "null"]}, "envConfigMaps": NAME_REFS, "envSecrets": NAME_REFS,
    "envVars": {"type": "array", "items": {"type": "string"}},
    "volumeMounts": {"type": "array"}, "volumes": {"type": "array"},
    "labels": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
    "failPodOnRunFailure": OPT_BOOL, "resources": {"type": ["object", "null"]},
    "schedulerName": {"type": ["string", "null"]}, "securityContext": {"type": ["object", "null"]},
    "runK8sConfig": {"anyOf": [RUN_K8S_CONFIG, {"type": "null"}]},
}, ("imagePullPolicy", "loadInclusterConfig", "envConfigMaps", "envSecrets", "envVars", "volumeMounts", "volumes"))

TAG_LIMIT = obj({"key": {"type": "string"},
                 "value": {"anyOf": [{"type": "string"}, {"type": "null"},
                                     obj({"applyLimitPerUniqueValue": {"type": "boolean"}})]},
                 "limit": {"type": "integer"}}, ("key", "limit"))

QUEUED = obj({
    "maxConcurrentRuns": OPT_INT, "tagConcurrencyLimits": {"type": ["array", "null"], "items": TAG_LIMIT},
    "dequeueIntervalSeconds": OPT_INT, "dequeueNumWorkers": OPT_INT, "dequeueUseThreads": OPT_BOOL,
    "blockOpConcurrencyLimitedRuns": {"type": ["object", "null"]},
})

DAEMON = obj({
    "enabled": {"type": "boolean"}, "image": IMAGE,
    "runCoordinator": obj({"enabled": {"type": "boolean"},
                           "type": {"enum": ["QueuedRunCoordinator", "CustomRunCoordinator"]},
                           "config": obj({"queuedRunCoordinator": {"anyOf": [QUEUED, {"type": "null"}]},
                                          "customRunCoordinator": {"type": ["object", "null"]}})},
                          ("enabled", "type", "config")),
    "heartbeatTolerance": {"type": "integer"}, "env": ENV, "envConfigMaps": NAME_REFS, "envSecrets": NAME_REFS,
    "deploymentLabels": STRINGS, "labels": STRINGS, "runMonitoring": {"type": "object"},
    "runRetries": {"type": "object"}, "sensors": {"type": "object"}, "schedules": {"type": "object"},
    "schedulerName": {"type": ["string", "null"]}, "volumeMounts": {"type": ["array", "null"]},
    "volumes": {"type": ["array", "null"]}, "initContainerResources": {"type": ["object", "null"]}, **POD,
})

WEBSERVER = obj({
    "replicaCount": {"type": "integer"}, "image": IMAGE, "nameOverride": {"type": "string"},
    "pathPrefix": {"type": ["string", "null"]}, "service": {"type": "object"}, "workspace": {"type": "object"},
    "env": ENV, "envConfigMaps": NAME_REFS, "envSecrets": NAME_REFS, "deploymentLabels": STRINGS,
    "labels": STRINGS, "enableReadOnly": {"type": "boolean"}, "dbStatementTimeout": OPT_INT,
    "dbPoolRecycle": OPT_INT, "logLevel": {"type": ["string", "null"]}, "schedulerName": {"type": ["string", "null"]},
    "volumeMounts": {"type": ["array", "null"]}, "volumes": {"type": ["array", "null"]},
    "initContainerResources": {"type": ["object", "null"]}, **POD,
})

S3_COMPUTE_LOGS = obj({k: {"type": ["string", "object", "null"]} for k in (
    "bucket", "localDir", "prefix", "verifyCertPath", "endpointUrl", "region")} | {
    k: OPT_BOOL for k in ("useSsl", "verify", "skipEmptyFiles", "showUrlOnly")} | {
    "uploadInterval": OPT_INT, "uploadExtraArgs": {"type": ["object", "null"]}}, ("bucket",))

TICK_RETENTION = obj({"purgeAfterDays": {"anyOf": [{"type": "integer"}, {"type": "object"}]}}, ("purgeAfterDays",))

CHART = obj({
    "dagsterWebserver": WEBSERVER,
    "dagster-user-deployments": obj({"enabled": {"type": "boolean"}, "enableSubchart": {"type": "boolean"},
                                     "imagePullSecrets": NAME_REFS,
                                     "deployments": {"type": "array", "items": USER_DEPLOYMENT}}),
    "postgresql": obj({"image": {"type": "object"}, "enabled": {"type": "boolean"},
                       "postgresqlHost": {"type": "string"}, "postgresqlUsername": {"type": "string"},
                       "postgresqlPassword": {"type": "string"}, "postgresqlDatabase": {"type": "string"},
                       "postgresqlParams": {"type": "object"}, "postgresqlScheme": {"type": "string"},
                       "service": obj({"port": {"type": "integer"}}, ("port",))}),
    "generatePostgresqlPasswordSecret": {"type": "boolean"},
    "generateCeleryConfigSecret": {"type": "boolean"},
    "rabbitmq": {"type": "object"}, "redis": {"type": "object"}, "flower": {"type": "object"},
    "ingress": {"type": "object"}, "imagePullSecrets": NAME_REFS,
    "computeLogManager": obj({
        "type": {"enum": ["NoOpComputeLogManager", "AzureBlobComputeLogManager", "GCSComputeLogManager",
                          "S3ComputeLogManager", "CustomComputeLogManager"]},
        "config": obj({"s3ComputeLogManager": S3_COMPUTE_LOGS, "azureBlobComputeLogManager": {"type": "object"},
                       "gcsComputeLogManager": {"type": "object"},
                       "customComputeLogManager": {"type": "object"}})}, ("type", "config")),
    "scheduler": {"type": "object"},
    "runLauncher": obj({
        "type": {"enum": ["CeleryK8sRunLauncher", "K8sRunLauncher", "CustomRunLauncher"]},
        "config": obj({"k8sRunLauncher": K8S_RUN_LAUNCHER, "celeryK8sRunLauncher": {"type": "object"},
                       "customRunLauncher": {"type": "object"}})}, ("type", "config")),
    "pythonLogs": {"type": "object"}, "dagsterDaemon": DAEMON, "busybox": {"type": "object"},
    "migrate": {"type": "object"}, "telemetry": {"type": "object"},
    "serviceAccount": obj({"create": {"type": "boolean"}, "name": {"type": "string"}, "annotations": STRINGS}),
    "global": obj({k: {"type": "string"} for k in (
        "postgresqlSecretName", "dagsterHome", "serviceAccountName", "celeryConfigSecretName")}),
    "retention": obj({"enabled": {"type": "boolean"}, "sensor": TICK_RETENTION, "schedule": TICK_RETENTION,
                      "autoMaterialize": TICK_RETENTION}, ("enabled", "sensor", "schedule")),
    "concurrency": obj({
        "enabled": {"type": "boolean"},
        "pools": obj({"defaultLimit": OPT_INT, "granularity": {"enum": ["run", "op", None]},
                      "opGranularityRunBuffer": OPT_INT}),
        "runs": obj({"maxConcurrentRuns": OPT_INT, "tagConcurrencyLimits": {"type": "array", "items": TAG_LIMIT}}),
    }),
    "additionalInstanceConfig": {"type": ["object", "null"]},
})


@pytest.fixture(scope="module")
def values() -> dict:
    return yaml.safe_load(VALUES.read_text())


def schema_errors(doc: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(CHART)
    return sorted(f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc))


def test_the_values_use_only_the_charts_keys(values):
    assert schema_errors(values) == []


@pytest.mark.parametrize("path, key", [
    (("runLauncher", "config", "k8sRunLauncher"), "envSecret"),
    (("dagsterDaemon", "runCoordinator", "config", "queuedRunCoordinator"), "maxConcurentRuns"),
    (("concurrency", "pools"), "default_limit"),
])
def test_a_misspelled_key_is_caught(values, path, key):
    broken = copy.deepcopy(values)
    node = broken
    for part in path:
        node = node[part]
    node[key] = node.get(key, 1)
    assert any(repr(key) in error for error in schema_errors(broken))


def test_runs_are_launched_as_kubernetes_jobs_of_this_package(values):
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    deployments = values["dagster-user-deployments"]["deployments"]
    assert len(deployments) >= 2
    for d in deployments:
        args = d["dagsterApiGrpcArgs"]
        assert args[:1] == ["-m"]
        assert importlib.util.find_spec(args[1]) is not None, f"{d['name']}: no module {args[1]}"
        assert d["includeConfigInLaunchedRuns"]["enabled"], f"{d['name']}: run pods would lack its Secrets"
        assert d["resources"]["limits"]["memory"] and d["resources"]["limits"]["cpu"]
    # one database per code location: each its own Secret
    secrets = [s["name"] for d in deployments for s in d["envSecrets"]]
    assert len(secrets) == len(set(secrets)) == len(deployments)
    launcher = values["runLauncher"]["config"]["k8sRunLauncher"]
    assert launcher["resources"]["limits"]["memory"] and launcher["resources"]["requests"]["cpu"]


def test_run_pods_give_up_only_what_the_local_sandbox_needs(values):
    config = values["runLauncher"]["config"]["k8sRunLauncher"]["runK8sConfig"]
    pod, container = config["podSpecConfig"], config["containerConfig"]["securityContext"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] > 0
    assert container["allowPrivilegeEscalation"] is False and container["capabilities"]["drop"] == ["ALL"]
    assert not container.get("privileged")
    # Kubernetes admits an unmasked /proc only in a pod with its own user namespace
    if container.get("procMount") == "Unmasked":
        assert pod["hostUsers"] is False


def test_dagster_reads_the_queue_and_pools_as_meant(values, tmp_path):
    """The chart writes `concurrency` and the run coordinator into dagster.yaml, in snake case
    (its templates/configmap-instance.yaml); Dagster 1.13 must accept that and read it back."""
    conc, queued = values["concurrency"], values["dagsterDaemon"]["runCoordinator"]
    assert conc["enabled"] and queued["enabled"] and queued["type"] == "QueuedRunCoordinator"
    q = queued["config"]["queuedRunCoordinator"]
    instance_yaml = {
        "concurrency": {
            "pools": {"granularity": conc["pools"]["granularity"], "default_limit": conc["pools"]["defaultLimit"]},
            "runs": {"max_concurrent_runs": conc["runs"]["maxConcurrentRuns"]},
        },
        "run_coordinator": {
            "module": "dagster.core.run_coordinator", "class": "QueuedRunCoordinator",
            "config": {"dequeue_interval_seconds": q["dequeueIntervalSeconds"],
                       "dequeue_use_threads": q["dequeueUseThreads"],
                       "dequeue_num_workers": q["dequeueNumWorkers"]},
        },
    }
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(instance_yaml))
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        config = instance.get_concurrency_config()
        assert config.pool_config.pool_granularity.value == "run"   # a run waits queued, holding no pod
        assert config.pool_config.default_pool_limit == conc["pools"]["defaultLimit"]
        assert config.run_queue_config.max_concurrent_runs == conc["runs"]["maxConcurrentRuns"]
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
    databases = len(values["dagster-user-deployments"]["deployments"])
    assert conc["runs"]["maxConcurrentRuns"] >= databases * conc["pools"]["defaultLimit"]


def test_no_secret_is_written_in_the_values(values):
    assert secret_literals(values) == []
    assert "postgresqlPassword" not in values["postgresql"]
    assert values["generatePostgresqlPasswordSecret"] is False and values["global"]["postgresqlSecretName"]


@pytest.mark.parametrize("leak", [
    {"env": {"CATALOGER_ANTHROPIC_API_KEY": "sk-ant-123"}},
    {"env": [{"name": "DB_PASSWORD", "value": "hunter2"}]},
    {"env": {"CATALOGER_DATABASE": "postgres://cat:hunter2@db/sales"}},
])
def test_a_secret_written_in_the_values_is_caught(values, leak):
    leaky = copy.deepcopy(values)
    leaky["dagster-user-deployments"]["deployments"][0].update(leak)
    assert secret_literals(leaky)
