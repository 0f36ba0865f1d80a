#!/usr/bin/env bash
# Collects facts about the GPU machine (run there through the device tool): driver, NVML, nvidia-smi timings, libraries, Python.
set +e;F=$OUT/facts.txt;s(){ echo "=== $1 ===";shift;timeout 20 bash -c "$*" 2>&1;};P=python3;{
s sys 'uname -a;cat /etc/os-release;id;hostname;env|sort;cat /proc/1/cgroup;ls -la /.dockerenv /run/.containerenv;mount|grep -iE "nvidia|cuda|proc|sys"|head -40'
s drv 'cat /proc/driver/nvidia/version;ls -la /proc/driver/nvidia/ /proc/driver/nvidia/gpus/*;cat /proc/driver/nvidia/gpus/*/information;grep -E "nvidia|nouveau" /proc/modules;ls /sys/module|grep -E "nvidia|nouveau";cat /sys/module/nvidia/version'
s dev 'ls -la /dev/nvidia* /dev/dxg;ls -la /dev/nvidia-caps'
s paths 'ls -laR /usr/local/nvidia|head -80;ls -lad /usr/local/cuda*;ls /usr/local/cuda/|head;which -a nvidia-smi nvcc python3 ptxas;readlink -f $(which nvidia-smi)'
for a in -L "" -q;do for i in 1 2 3;do echo "time nvidia-smi $a";t=$(date +%s%N);timeout 20 nvidia-smi $a >/dev/null 2>&1;echo rc=$? ms=$(( ($(date +%s%N)-t)/1000000 ));done;done
echo === pynvml ===;timeout 20 $P -c '
import time;t=time.time()
try:
 import pynvml as n;n.nvmlInit();print("nvmlInit s",time.time()-t);h=n.nvmlDeviceGetHandleByIndex(0)
except Exception as e:print("E",repr(e))
for f in "DeviceGetName SystemGetDriverVersion SystemGetCudaDriverVersion DeviceGetCudaComputeCapability DeviceGetPersistenceMode DeviceGetComputeMode DeviceGetCurrPcieLinkGeneration DeviceGetMaxPcieLinkGeneration DeviceGetCurrPcieLinkWidth DeviceGetMaxPcieLinkWidth".split():
 try:g=getattr(n,"nvml"+f);print(f,g(h) if "Device" in f else g())
 except Exception as e:print(f,"E",repr(e))' 2>&1
s py 'which python3;'$P' -c "import sys,sysconfig;print(sys.version,sys.prefix,sys.base_prefix,sys.executable,sysconfig.get_paths()[\"purelib\"])";S=$('$P' -c "import sysconfig;print(sysconfig.get_paths()[\"purelib\"])");ls $S/nvidia;for d in $S/nvidia/*/;do echo "-- $d";ls $d/lib 2>&1|head -30;done;cat $('$P' -c "import sys;print(sys.prefix)")/pyvenv.cfg;ls ~/.local/share/jupyter/kernels /usr/local/share/jupyter/kernels /usr/share/jupyter/kernels;which conda jupyter'
s dmesg 'dmesg|tail -30;cat /proc/sys/kernel/dmesg_restrict;journalctl -k -n 5'
s tools 'for t in tmux script unshare nsenter python3 gcc go hyperfine strace;do echo "$t: $(command -v $t)";done'
s res 'df -h / /tmp $HOME;nproc;free -g;cat /sys/bus/pci/devices/*/numa_node|sort|uniq -c;ls /sys/bus/pci/drivers/nvidia;mokutil --sb-state;ls /sys/firmware/efi'
s find 'find / -xdev -name "libcuda.so*";find / -xdev -name "libnvidia-ml.so*";find / -name "libcudnn*.so*" -not -path "/proc/*"|head -20;find / -name "libcublas.so*" -not -path "/proc/*"|head'
s torch $P' -c "import torch;print(torch.__version__,torch.version.cuda,torch.backends.cudnn.version(),torch.cuda.is_available())"'
s maps $P' -c "import ctypes;ctypes.CDLL(\"libcublas.so.13\");print(open(\"/proc/self/maps\").read())"|grep -E "\.so"|awk "{print \$6}"|sort -u|head -50'
} >$F 2>&1
timeout 30 nvidia-smi -q >$OUT/nvidia-smi-q.txt 2>&1;timeout 30 nvidia-smi -q -x >$OUT/nvidia-smi-q.xml 2>&1
{ ldconfig -p;cat /etc/ld.so.conf /etc/ld.so.conf.d/*;} >$OUT/ldconfig.txt 2>&1
timeout 60 $P -m pip list >$OUT/pip.txt 2>&1;true
