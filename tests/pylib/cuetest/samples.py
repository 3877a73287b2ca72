# SPDX-License-Identifier: Apache-2.0
"""cuetest.samples - our equivalents of Kueue's samples
(tests/data/frameworks, its README.md) and how to tell each is done.

  DONE    (group/version, plural, name, done(obj)) of each sample object
          that kubectl apply creates (the CRD kinds); done(obj) says it
          finished (or, for a kind that never finishes, serves)
  FILES   the sample files those objects come from, for kubectl apply
"""
from .frameworks import cond_true


def succeeded(o):
    return cond_true(o, "Succeeded")


DONE = [
    ("kubeflow.org/v1", "pytorchjobs", "pytorch-simple", succeeded),
    ("kubeflow.org/v1", "tfjobs", "tf-dist-mnist", succeeded),
    ("kubeflow.org/v1", "xgboostjobs", "xgboost-dist-iris", succeeded),
    ("kubeflow.org/v1", "paddlejobs", "paddle-simple-cpu", succeeded),
    ("kubeflow.org/v1", "jaxjobs", "jaxjob-simple", succeeded),
    ("kubeflow.org/v2beta1", "mpijobs", "pi", succeeded),
    ("trainer.kubeflow.org/v1alpha1", "trainjobs", "pytorch-mnist",
     lambda o: cond_true(o, "Complete")),
    ("ray.io/v1", "rayjobs", "rayjob-sample",
     lambda o: o["status"].get("jobDeploymentStatus") == "Complete"),
    ("ray.io/v1", "rayclusters", "raycluster-sample",
     lambda o: o["status"].get("state") == "ready"),
    ("ray.io/v1", "rayservices", "rayservice-sample",
     lambda o: cond_true(o, "Ready")),
    ("workload.codeflare.dev/v1beta2", "appwrappers", "wrapped-pytorch",
     lambda o: o["status"].get("phase") == "Succeeded"),
    ("workload.codeflare.dev/v1beta2", "appwrappers", "wrapped-deployment",
     lambda o: cond_true(o, "PodsReady")),
    ("workload.codeflare.dev/v1beta2", "appwrappers", "wrapped-lws",
     lambda o: cond_true(o, "PodsReady")),
    ("sparkoperator.k8s.io/v1beta2", "sparkapplications", "spark-pi",
     lambda o: o["status"].get("applicationState", {}).get("state") ==
     "COMPLETED"),
]

FILES = ["pytorchjob.yaml", "tfjob.yaml", "xgboostjob.yaml",
         "paddlejob.yaml", "jaxjob.yaml", "mpijob.yaml", "trainjob.yaml",
         "rayjob.yaml", "raycluster.yaml", "rayservice.yaml",
         "appwrapper-pytorchjob.yaml", "appwrapper-deployment.yaml",
         "appwrapper-leaderworkerset.yaml", "sparkapplication.yaml"]
