/* k8s.h: `asgd k8s CONFIG --image IMAGE [--kind tfjob|pytorchjob]
 * [section.key=value ...]`: a manifest for Kubeflow's training operator
 * that runs the experiment's distributed job, one `asgd role` per pod.
 *
 * On standard output, as YAML documents:
 *   - a ConfigMap NAME-config holding the resolved config (overrides
 *     included, cluster.transport = tcp), mounted at /etc/asgd;
 *   - with cluster.auth = curve, a Secret NAME-keys holding fresh CURVE
 *     keys for every role (asgd keys), mounted at /etc/asgd/keys and given
 *     to each process with --keys;
 *   - the job: a TFJob with PS ([cluster] servers), Chief (the evaluator)
 *     and Worker ([cluster] workers) replicas, whose TF_CONFIG places each
 *     pod; or a PyTorchJob with a Master (the shard: [cluster] servers
 *     must be 1) and Worker replicas (the evaluator, then the workers),
 *     whose RANK and WORLD_SIZE do (engines.h). restartPolicy comes from
 *     cluster.restart (Never, OnFailure, ExitCode), runPolicy's
 *     backoffLimit from cluster.backoff_limit, and workers ask for one
 *     nvidia.com/gpu each when backend.device = cuda.
 * Each pod writes its part of the run folder to /runs (an emptyDir: mount
 * a volume there to keep it). */
#ifndef ASGD_K8S_H
#define ASGD_K8S_H

/* The command's exit status (0, 1 or 2), after one line on stderr when
 * it failed. */
int k8s_main(int argc, char **argv);

#endif
