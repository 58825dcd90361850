#!/usr/bin/env bash
# A real single-node Slurm (munge, slurmctld and slurmd on localhost, in a private folder)
# runs kcheck as a job array of 3 shards (--shard auto); kcheck merge joins their reports,
# whose summary must equal the unsharded run's. Prints "SKIPPED: reason" (the test's
# skip pattern) when Slurm is not installed or its daemons do not start within 60 s.
#   slurm_array.sh KCHECK CASES WORK
set -uo pipefail
KCHECK=$1 CASES=$2 WORK=$3
for tool in munged slurmctld slurmd sbatch sinfo; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIPPED: $tool not found (apt-get install slurm-wlm munge)"; exit 0; }
done
rm -rf "$WORK" && mkdir -p "$WORK"/{munge,state,spool,log,out}
cd "$WORK" || exit 1
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

# munge with a key of its own, on a socket in this folder.
dd if=/dev/urandom of=munge/munge.key bs=1024 count=1 status=none && chmod 400 munge/munge.key
munged --force --key-file=munge/munge.key --socket=munge/socket --pid-file=munge/pid --log-file=munge/log \
  --seed-file=munge/seed 2>/dev/null || { echo "SKIPPED: munged did not start"; exit 0; }
pids+=("$(cat munge/pid 2>/dev/null)")

port=$((17000 + RANDOM % 2000))
host=$(hostname -s)
cat > slurm.conf <<CONF
ClusterName=kc
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$WORK/munge/socket
CredType=cred/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=kc Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$WORK/slurm.conf
slurmctld -D -f slurm.conf >log/ctld.out 2>&1 & pids+=($!)
slurmd -D -f slurm.conf >log/d.out 2>&1 & pids+=($!)
for _ in $(seq 60); do
  sinfo -h -o %T 2>/dev/null | grep -q idle && break
  sleep 1
done
if ! sinfo -h -o %T 2>/dev/null | grep -q idle; then
  echo "SKIPPED: the Slurm daemons did not start within 60 s: $(tail -n 2 log/slurmctld.log log/slurmd.log 2>/dev/null | tr '\n' ' ')"
  exit 0
fi

"$KCHECK" run "$CASES" --backend reference --report out/full.json >/dev/null || { echo "FAILED: the unsharded run"; exit 1; }
sbatch --wait --array=0-2 -o "$WORK/out/%a.log" \
  --wrap "\"$KCHECK\" run \"$CASES\" --backend reference --shard auto --report \"$WORK/out/shard-\$SLURM_ARRAY_TASK_ID.json\"" \
  || { echo "FAILED: the job array"; cat out/*.log; exit 1; }
"$KCHECK" merge out/shard-0.json out/shard-1.json out/shard-2.json -o out/merged.json || { echo "FAILED: merge"; exit 1; }
summary() { grep -o '"summary": {[^}]*}' "$1"; }
for i in 0 1 2; do
  grep -q "\"shard\": \"$i/3\"" "out/shard-$i.json" || { echo "FAILED: array task $i did not run shard $i/3"; exit 1; }
done
if [ "$(summary out/full.json)" != "$(summary out/merged.json)" ]; then
  echo "FAILED: merged $(summary out/merged.json), unsharded $(summary out/full.json)"
  exit 1
fi
echo "slurm array of 3 shards merged: $(summary out/merged.json)"
