// NVML loaded at run time (dlopen of libnvidia-ml.so.1, which ships with the
// driver), so the programs build on machines whose CUDA toolkit has no
// nvml.h or stub library, and run wherever a driver is. Only the handful of
// entry points the power benchmark reads, declared with NVML's stable C ABI
// (nvml.h: nvmlReturn_t is an int enum, NVML_SUCCESS = 0, NVML_CLOCK_SM = 1,
// NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0).
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <string>

namespace bench {

class Nvml {
 public:
  using Device = void*;
  static constexpr int kClockSm = 1, kClockMem = 2, kTempGpu = 0;

  // Loads NVML and finds the device with this PCI bus id ("0000:19:00.0").
  // `error()` says why when ok() is false.
  explicit Nvml(const std::string& pci_bus_id) {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib_) lib_ = dlopen("libnvidia-ml.so", RTLD_NOW);
    if (!lib_) {
      error_ = "libnvidia-ml.so.1 not found";
      return;
    }
    init_ = Sym<int (*)()>("nvmlInit_v2");
    shutdown_ = Sym<int (*)()>("nvmlShutdown");
    by_bus_ = Sym<int (*)(const char*, Device*)>("nvmlDeviceGetHandleByPciBusId_v2");
    power_ = Sym<int (*)(Device, unsigned*)>("nvmlDeviceGetPowerUsage");
    energy_ = Sym<int (*)(Device, unsigned long long*)>("nvmlDeviceGetTotalEnergyConsumption");
    limit_ = Sym<int (*)(Device, unsigned*)>("nvmlDeviceGetEnforcedPowerLimit");
    default_limit_ = Sym<int (*)(Device, unsigned*)>("nvmlDeviceGetPowerManagementDefaultLimit");
    clock_ = Sym<int (*)(Device, int, unsigned*)>("nvmlDeviceGetClockInfo");
    max_clock_ = Sym<int (*)(Device, int, unsigned*)>("nvmlDeviceGetMaxClockInfo");
    temp_ = Sym<int (*)(Device, int, unsigned*)>("nvmlDeviceGetTemperature");
    reasons_ = Sym<int (*)(Device, unsigned long long*)>("nvmlDeviceGetCurrentClocksThrottleReasons");
    driver_ = Sym<int (*)(char*, unsigned)>("nvmlSystemGetDriverVersion");
    if (!init_ || !by_bus_ || !power_) {
      error_ = "libnvidia-ml lacks nvmlInit_v2/nvmlDeviceGetHandleByPciBusId_v2/nvmlDeviceGetPowerUsage";
      return;
    }
    if (int rc = init_(); rc != 0) {
      error_ = "nvmlInit_v2 failed with code " + std::to_string(rc);
      return;
    }
    initialized_ = true;
    if (int rc = by_bus_(pci_bus_id.c_str(), &dev_); rc != 0) {
      error_ = "nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id + ") failed with code " + std::to_string(rc);
      return;
    }
    ok_ = true;
  }
  ~Nvml() {
    if (initialized_ && shutdown_) shutdown_();
    if (lib_) dlclose(lib_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  // Each getter returns -1 when the query is unsupported or fails.
  double PowerW() const { return Get(power_, 1e-3); }
  double EnergyJ() const {
    unsigned long long mj = 0;
    return energy_ && energy_(dev_, &mj) == 0 ? mj * 1e-3 : -1.0;
  }
  double PowerLimitW() const { return Get(limit_, 1e-3); }
  double DefaultPowerLimitW() const { return Get(default_limit_, 1e-3); }
  double ClockMhz(int which) const { return Get2(clock_, which); }
  double MaxClockMhz(int which) const { return Get2(max_clock_, which); }
  double TemperatureC() const { return Get2(temp_, kTempGpu); }
  unsigned long long ThrottleReasons() const {
    unsigned long long r = 0;
    return reasons_ && reasons_(dev_, &r) == 0 ? r : 0;
  }
  std::string DriverVersion() const {
    char buf[96] = {0};
    return driver_ && driver_(buf, sizeof buf) == 0 ? buf : "";
  }

 private:
  template <typename F>
  F Sym(const char* name) {
    return reinterpret_cast<F>(dlsym(lib_, name));
  }
  double Get(int (*f)(Device, unsigned*), double scale) const {
    unsigned v = 0;
    return f && f(dev_, &v) == 0 ? v * scale : -1.0;
  }
  double Get2(int (*f)(Device, int, unsigned*), int which) const {
    unsigned v = 0;
    return f && f(dev_, which, &v) == 0 ? static_cast<double>(v) : -1.0;
  }

  void* lib_ = nullptr;
  Device dev_ = nullptr;
  bool ok_ = false, initialized_ = false;
  std::string error_;
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  int (*by_bus_)(const char*, Device*) = nullptr;
  int (*power_)(Device, unsigned*) = nullptr;
  int (*energy_)(Device, unsigned long long*) = nullptr;
  int (*limit_)(Device, unsigned*) = nullptr;
  int (*default_limit_)(Device, unsigned*) = nullptr;
  int (*clock_)(Device, int, unsigned*) = nullptr;
  int (*max_clock_)(Device, int, unsigned*) = nullptr;
  int (*temp_)(Device, int, unsigned*) = nullptr;
  int (*reasons_)(Device, unsigned long long*) = nullptr;
  int (*driver_)(char*, unsigned) = nullptr;
};

}  // namespace bench
