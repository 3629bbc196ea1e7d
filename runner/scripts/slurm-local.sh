#!/usr/bin/env bash
# `npm run slurm:local`: a single-node Slurm cluster on this machine, from Debian's packages, for trying
# `rewardsmith sweep --engine slurm` and for the tests that run real Slurm jobs. Needs root (installs
# packages, writes /etc/slurm, starts daemons). Idempotent: running it again with everything up changes
# nothing; with a daemon down, it starts that daemon; with a changed config, it restarts the daemons.
#
# Made for a container: no systemd and no cgroup control, so processes are tracked by /proc
# (proctrack/linuxproc) and tasks are not confined (task/none). Accounting: no slurmdbd (it needs a MySQL
# server), so `sacct` is unavailable here; finished jobs stay in the controller for a day (MinJobAge) where
# `scontrol show job` and `squeue --states=all` see them, and every job's end is appended to
# /var/log/slurm/jobcomp.log (jobcomp/filetxt). The sweep uses sacct where a cluster has it and scontrol
# where it does not.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
  echo "slurm:local: run as root (it installs slurm-wlm and munge and starts their daemons)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm:local: installing slurm-wlm and munge"
  # The packages' scripts would start the daemons with no configuration yet (and fail the install where
  # there is no init system): forbid service starts while installing, as Docker images do; we start them below.
  own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && own_policy=1
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
  [ "$own_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
fi

HOST="$(hostname -s)"
CPUS="$(nproc)"
MEM_MB="$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)"
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
chown munge:munge /run/munge
chmod 0755 /run/munge

CONF="$(cat <<CONF
# Written by rewardsmith's slurm:local script: a single-node cluster for a container.
ClusterName=rewardsmith-local
SlurmctldHost=${HOST}(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
MinJobAge=86400
ReturnToService=2
SchedulerType=sched/backfill
MpiDefault=none
NodeName=${HOST} NodeAddr=127.0.0.1 CPUs=${CPUS} RealMemory=${MEM_MB} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
)"

changed=0
if [ ! -f /etc/slurm/slurm.conf ] || [ "$(cat /etc/slurm/slurm.conf)" != "$CONF" ]; then
  printf '%s\n' "$CONF" > /etc/slurm/slurm.conf
  changed=1
fi
# No cgroup plugin is used (see above); an explicit cgroup.conf keeps slurmd from probing for one.
CGROUP_CONF='CgroupPlugin=autodetect
IgnoreSystemd=yes'
if [ ! -f /etc/slurm/cgroup.conf ] || [ "$(cat /etc/slurm/cgroup.conf)" != "$CGROUP_CONF" ]; then
  printf '%s\n' "$CGROUP_CONF" > /etc/slurm/cgroup.conf
  changed=1
fi

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

if ! running /run/munge/munged.pid; then
  echo "slurm:local: starting munged"
  runuser -u munge -- /usr/sbin/munged
fi
if [ "$changed" = 1 ]; then
  for d in slurmd slurmctld; do
    if running "/run/$d.pid"; then
      echo "slurm:local: configuration changed, stopping $d"
      kill "$(cat "/run/$d.pid")"
      for _ in $(seq 50); do running "/run/$d.pid" || break; sleep 0.1; done
    fi
  done
fi
if ! running /run/slurmctld.pid; then
  echo "slurm:local: starting slurmctld"
  /usr/sbin/slurmctld
fi
if ! running /run/slurmd.pid; then
  echo "slurm:local: starting slurmd"
  /usr/sbin/slurmd
fi

# Wait until the node takes jobs (the controller needs a moment to hear from slurmd).
for _ in $(seq 100); do
  state="$(sinfo -h -N -o '%T' 2>/dev/null | head -1 || true)"
  case "$state" in
    idle*|mixed*|allocated*) echo "slurm:local: node ${HOST} is ${state} (${CPUS} CPUs, partition debug); sinfo, squeue, sbatch, scontrol are ready"; exit 0 ;;
    down*|drain*) scontrol update NodeName="${HOST}" State=RESUME >/dev/null 2>&1 || true ;;
  esac
  sleep 0.2
done
echo "slurm:local: the node did not become ready; see /var/log/slurm/slurmctld.log and slurmd.log" >&2
sinfo -N -l >&2 || true
exit 1
