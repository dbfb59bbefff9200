// The weights object: laid out by LLVM's MC layer, filled by streaming (see ObjectWriter.h).
#include "ObjectWriter.h"

#include <llvm/ADT/Triple.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/MC/MCAsmBackend.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCCodeEmitter.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCExpr.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCObjectFileInfo.h>
#include <llvm/MC/MCObjectWriter.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSectionELF.h>
#include <llvm/MC/MCStreamer.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELF.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <unistd.h>

namespace odlac {
namespace {

// The LLVM targets odlac links (their MC layers only): the architectures of the embedded
// and server boards odlac is cross-compiled for.
void initTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86TargetMC();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeARMTargetInfo();
    LLVMInitializeARMTargetMC();
    LLVMInitializeRISCVTargetInfo();
    LLVMInitializeRISCVTargetMC();
  });
}

const char *kSupported =
    "x86_64, i686, aarch64, arm, thumb, riscv32 and riscv64 (little-endian ELF)";

// What a C compiler for the triple assumes by default and encodes in the ELF header, so
// that the linker accepts the object beside compiled code: RISC-V Linux is rv64gc/lp64d.
void abiFor(const llvm::Triple &tt, std::string &features, llvm::MCTargetOptions &mc) {
  if (tt.isRISCV() && tt.isOSLinux()) {
    features = "+m,+a,+f,+d,+c";
    mc.ABIName = tt.isArch64Bit() ? "lp64d" : "ilp32d";
  }
}

// Where each named symbol's bytes start in the object file.
template <class ELFT>
Status symbolOffsets(llvm::StringRef image, const std::string &path,
                     std::map<std::string, uint64_t> &want) {
  auto file = llvm::object::ELFFile<ELFT>::create(image);
  if (!file)
    return Status::error(path + ": " + llvm::toString(file.takeError()));
  auto sections = file->sections();
  if (!sections)
    return Status::error(path + ": " + llvm::toString(sections.takeError()));
  size_t found = 0;
  for (const auto &sec : *sections) {
    if (sec.sh_type != llvm::ELF::SHT_SYMTAB)
      continue;
    auto strtab = file->getStringTableForSymtab(sec);
    auto syms = file->symbols(&sec);
    if (!strtab || !syms)
      return Status::error(path + ": unreadable symbol table");
    for (const auto &sym : *syms) {
      auto name = sym.getName(*strtab);
      if (!name)
        return Status::error(path + ": " + llvm::toString(name.takeError()));
      auto it = want.find(name->str());
      if (it == want.end() || sym.st_shndx >= sections->size())
        continue;
      it->second = (*sections)[sym.st_shndx].sh_offset + sym.st_value;
      ++found;
    }
  }
  if (found != want.size())
    return Status::error(path + ": " + std::to_string(want.size() - found) +
                         " weight symbols missing from the written object");
  return Status::ok();
}

} // namespace

namespace {

Status writeAt(int fd, const std::string &path, const ObjectSymbol &s, uint64_t at) {
  const char *data = static_cast<const char *>(s.data);
  const uint64_t size = s.size;
  constexpr uint64_t kChunk = 8u << 20;
  for (uint64_t done = 0; done < size;) {
    size_t n = static_cast<size_t>(std::min(kChunk, size - done));
    ssize_t w = pwrite(fd, data + done, n, static_cast<off_t>(at + done));
    if (w <= 0)
      return Status::error(path + ": write failed: " + std::strerror(errno));
    if (s.source)
      s.source->dropPages(data + done, static_cast<size_t>(w));
    done += static_cast<uint64_t>(w);
  }
  return Status::ok();
}

} // namespace

std::string hostTriple() { return llvm::Triple::normalize(llvm::sys::getProcessTriple()); }

int targetPointerBits(const std::string &triple) {
  llvm::Triple tt(llvm::Triple::normalize(triple.empty() ? hostTriple() : triple));
  return tt.isArch64Bit() ? 64 : 32;
}

Expected<std::string> checkObjectTarget(const std::string &triple) {
  initTargets();
  llvm::Triple tt(llvm::Triple::normalize(triple));
  std::string err;
  if (tt.getArch() == llvm::Triple::UnknownArch ||
      !llvm::TargetRegistry::lookupTarget(tt.str(), err))
    return Status::error("--target '" + triple + "': odlac writes weight objects for " +
                         kSupported);
  // Weights are stored in the host's (little-endian) byte order and copied verbatim.
  if (!tt.isOSBinFormatELF() || !tt.isLittleEndian())
    return Status::error("--target '" + triple +
                         "': not a little-endian ELF target; odlac "
                         "writes weight objects for " +
                         kSupported);
  return tt.str();
}

Status writeWeightsObject(const std::string &path, const ObjectOptions &opts,
                          const std::vector<ObjectSymbol> &symbols) {
  auto normalized = checkObjectTarget(opts.triple.empty() ? hostTriple() : opts.triple);
  if (!normalized)
    return normalized.takeStatus();
  llvm::Triple tt(*normalized);
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(tt.str(), err);
  llvm::MCTargetOptions mcOptions;
  std::string features;
  abiFor(tt, features, mcOptions);
  std::unique_ptr<llvm::MCRegisterInfo> mri(target->createMCRegInfo(tt.str()));
  std::unique_ptr<llvm::MCAsmInfo> mai(target->createMCAsmInfo(*mri, tt.str(), mcOptions));
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(tt.str(), "", features));
  std::unique_ptr<llvm::MCInstrInfo> mii(target->createMCInstrInfo());
  if (!mri || !mai || !sti || !mii)
    return Status::error("--target '" + tt.str() + "': LLVM lacks this target's MC layer");
  llvm::MCContext ctx(tt, mai.get(), mri.get(), sti.get(), nullptr, &mcOptions);
  std::unique_ptr<llvm::MCObjectFileInfo> mofi(target->createMCObjectFileInfo(ctx, /*PIC=*/true));
  ctx.setObjectFileInfo(mofi.get());

  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return Status::error(path + ": cannot create: " + ec.message());
    std::unique_ptr<llvm::MCAsmBackend> backend(target->createMCAsmBackend(*sti, *mri, mcOptions));
    std::unique_ptr<llvm::MCCodeEmitter> emitter(target->createMCCodeEmitter(*mii, *mri, ctx));
    std::unique_ptr<llvm::MCObjectWriter> writer = backend->createObjectWriter(os);
    std::unique_ptr<llvm::MCStreamer> out(target->createMCObjectStreamer(
        tt, ctx, std::move(backend), std::move(writer), std::move(emitter), *sti,
        /*RelaxAll=*/false, /*IncrementalLinkerCompatible=*/false,
        /*DWARFMustBeAtTheEnd=*/false));
    out->initSections(/*NoExecStack=*/true, *sti);
    llvm::MCSection *section =
        opts.section.empty()
            ? mofi->getReadOnlySection()
            : ctx.getELFSection(opts.section, llvm::ELF::SHT_PROGBITS, llvm::ELF::SHF_ALLOC);
    out->SwitchSection(section);
    for (const ObjectSymbol &s : symbols) {
      llvm::MCSymbol *sym = ctx.getOrCreateSymbol(s.name);
      out->emitValueToAlignment(static_cast<unsigned>(opts.align));
      out->emitSymbolAttribute(sym, llvm::MCSA_Global);
      out->emitSymbolAttribute(sym, llvm::MCSA_Hidden); // not exported from a shared library
      out->emitSymbolAttribute(sym, llvm::MCSA_ELF_TypeObject);
      out->emitLabel(sym);
      uint64_t bytes = std::max<uint64_t>(1, s.size);
      out->emitELFSize(sym, llvm::MCConstantExpr::create(static_cast<int64_t>(bytes), ctx));
      out->emitFill(bytes, 0); // placeholder, filled below
    }
    out->Finish();
    os.close();
    if (os.has_error())
      return Status::error(path + ": write failed: " + os.error().message());
  }

  // Find each tensor's place in the file and stream its bytes there.
  std::map<std::string, uint64_t> offsets;
  for (const ObjectSymbol &s : symbols)
    offsets[s.name] = 0;
  {
    auto image = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/false);
    if (!image)
      return Status::error(path + ": cannot read back: " + image.getError().message());
    llvm::StringRef bytes = (*image)->getBuffer();
    Status s = tt.isArch64Bit() ? symbolOffsets<llvm::object::ELF64LE>(bytes, path, offsets)
                                : symbolOffsets<llvm::object::ELF32LE>(bytes, path, offsets);
    if (s)
      return s;
  }
  int fd = open(path.c_str(), O_WRONLY);
  if (fd < 0)
    return Status::error(path + ": cannot open for writing: " + std::strerror(errno));
  for (const ObjectSymbol &s : symbols)
    if (Status st = writeAt(fd, path, s, offsets[s.name])) {
      close(fd);
      return st;
    }
  if (close(fd) != 0)
    return Status::error(path + ": write failed: " + std::strerror(errno));
  return Status::ok();
}

} // namespace odlac
