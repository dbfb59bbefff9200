"""A minimal reader of little-endian ELF relocatable objects (ELF32 and ELF64): the header's
machine and class, the sections, and the symbol table, enough to check the weights objects
odlac writes without trusting any of odlac's (or LLVM's) code."""
import struct

EM_NAMES = {3: "i386", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv"}


class Elf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.path = path
            head = f.read(64)
            assert head[:4] == b"\x7fELF", f"{path}: not ELF"
            self.bits = 64 if head[4] == 2 else 32
            assert head[5] == 1, f"{path}: not little-endian"
            self.type, self.machine = struct.unpack_from("<HH", head, 16)
            if self.bits == 64:
                shoff, = struct.unpack_from("<Q", head, 40)
                self.flags, = struct.unpack_from("<I", head, 48)
                shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 58)
            else:
                shoff, self.flags = struct.unpack_from("<II", head, 32)
                shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 46)
            f.seek(shoff)
            raw = f.read(shentsize * shnum)
            self.sections = []
            for i in range(shnum):
                e = raw[i * shentsize:(i + 1) * shentsize]
                if self.bits == 64:
                    name, typ, flags, _, off, size, link, _, align, entsize = struct.unpack_from(
                        "<IIQQQQIIQQ", e)
                else:
                    name, typ, flags, _, off, size, link, _, align, entsize = struct.unpack_from(
                        "<IIIIIIIIII", e)
                self.sections.append(dict(name_off=name, type=typ, flags=flags, offset=off,
                                          size=size, link=link, align=align, entsize=entsize))
            names = self._read(f, self.sections[shstrndx])
            for s in self.sections:
                s["name"] = names[s["name_off"]:names.index(b"\0", s["name_off"])].decode()
            self.symbols = {}
            for s in self.sections:
                if s["type"] != 2:  # SHT_SYMTAB
                    continue
                strtab = self._read(f, self.sections[s["link"]])
                data = self._read(f, s)
                for i in range(len(data) // s["entsize"]):
                    e = data[i * s["entsize"]:(i + 1) * s["entsize"]]
                    if self.bits == 64:
                        name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", e)
                    else:
                        name, value, size, info, other, shndx = struct.unpack_from("<IIIBBH", e)
                    n = strtab[name:strtab.index(b"\0", name)].decode()
                    self.symbols[n] = dict(value=value, size=size, bind=info >> 4,
                                           type=info & 15, visibility=other & 3, shndx=shndx)

    @staticmethod
    def _read(f, section):
        f.seek(section["offset"])
        return f.read(section["size"])

    def symbol_bytes(self, name, offset=0, length=None):
        """The bytes of a defined symbol, read straight from the file."""
        sym = self.symbols[name]
        sec = self.sections[sym["shndx"]]
        length = sym["size"] - offset if length is None else length
        with open(self.path, "rb") as f:
            f.seek(sec["offset"] + sym["value"] + offset)
            return f.read(length)

    def section_of(self, name):
        return self.sections[self.symbols[name]["shndx"]]["name"]
