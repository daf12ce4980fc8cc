"""Turn a built overlay into what `podman kube play` can run here, on stdout.

podman cannot mount Kubernetes Secrets, so the Secret references become literal test values
(only here, never in the manifests): GUARD_API_KEYS instead of the mounted key file, a fixed
audit key, no admin token and no Redis. The image is the one just built (never pulled). Everything
else (the ConfigMaps, their mounts over /etc/guard, the security context, the args) is kept as
kubectl kustomize built it. The Deployment is renamed POD_NAME, so that the caller removes only what it started.
Usage: python kube-play.py BUILT.yaml IMAGE API_KEY POD_NAME
"""

import sys

import yaml

TEST_VALUES = {"audit-key": "kube-play-audit-key"}


def main() -> None:
    built, image, api_key, name = sys.argv[1:5]
    docs = [d for d in yaml.safe_load_all(open(built, encoding="utf-8")) if d]
    out = []
    for doc in docs:
        if doc["kind"] == "ConfigMap":
            out.append(doc)
        elif doc["kind"] == "Deployment":
            doc["metadata"]["name"] = name
            pod = doc["spec"]["template"]["spec"]
            secret_volumes = {v["name"] for v in pod["volumes"] if "secret" in v}
            pod["volumes"] = [v for v in pod["volumes"] if v["name"] not in secret_volumes]
            for c in pod["containers"]:
                c["image"] = image
                c["imagePullPolicy"] = "Never"
                c["volumeMounts"] = [
                    m for m in c["volumeMounts"] if m["name"] not in secret_volumes
                ]
                env = []
                for e in c["env"]:
                    ref = e.get("valueFrom", {}).get("secretKeyRef")
                    if e["name"] == "GUARD_API_KEYS_FILE":
                        env.append({"name": "GUARD_API_KEYS", "value": f"{api_key} *"})
                    elif ref is None:
                        env.append(e)
                    elif ref["key"] in TEST_VALUES:
                        env.append({"name": e["name"], "value": TEST_VALUES[ref["key"]]})
                    elif not ref.get("optional", False):
                        sys.exit(f"{e['name']}: a required Secret key with no test value")
                c["env"] = env
            out.append(doc)
    if not any(d["kind"] == "Deployment" for d in out):
        sys.exit(f"no Deployment in {built}")
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
