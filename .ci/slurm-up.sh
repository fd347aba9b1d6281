#!/usr/bin/env bash
# A one-host Slurm cluster for the Slurm integration tests (cmd/trellis,
# TestSlurmOnCluster*): installs slurm-wlm and munge if missing, generates a
# munge key if there is none, writes a minimal slurm.conf (node "localhost",
# CPUs=2, oversubscription allowed) and starts munged, slurmctld and slurmd.
# Idempotent: running daemons are left alone. Needs root.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" != 0 ]; then
	echo "slurm-up.sh: run as root" >&2; exit 1
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	apt-get install -y --no-install-recommends slurm-wlm munge
fi

# munge: a key, its directories, the daemon (as the munge user).
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
	dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
	runuser -u munge -- /usr/sbin/munged
	for _ in $(seq 50); do
		munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break
		sleep 0.2
	done
fi

# slurm.conf: one node, localhost, whatever its host name; the daemons as
# root; no cgroups, accounting or job completion logs.
install -d -m 0755 /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
cat > /etc/slurm/slurm.conf <<'EOF'
# Written by .ci/slurm-up.sh: a one-host cluster for trellis's tests.
ClusterName=trellis-ci
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=localhost NodeHostname=localhost CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF

# A daemon killed a moment ago may linger as a zombie: count live ones only.
running() { pgrep -x -r R,S,D "$1" >/dev/null; }
if ! running slurmctld; then
	slurmctld
fi
if ! running slurmd; then
	slurmd -N localhost
fi
for _ in $(seq 100); do
	if sinfo -h -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; then
		echo "slurm-up.sh: one-host Slurm cluster up"; sinfo; exit 0
	fi
	sleep 0.3
done
echo "slurm-up.sh: the node did not come up; logs in /var/log/slurm" >&2
sinfo >&2 || true
tail -20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
