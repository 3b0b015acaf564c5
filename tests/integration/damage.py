"""damage.py - damages stored objects for cli-damaged.sh.

  damage.py cut FILE           keeps the first half of FILE
  damage.py flip FILE OFFSET   inverts the byte at OFFSET (negative: from the end)
  damage.py split-doc FILE     makes the first stored document of a split
                               (written with compression = 'none') JSON that
                               does not parse, and rewrites every checksum
                               that covers it (docs/COLLECTION-SPLIT.md), so
                               that only a reader that parses the document
                               can tell
  damage.py graph-props FILE   the same for the properties of the first node
                               of a graph segment (docs/GRAPH.md)
"""
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def split_doc(path):
    b = bytearray(open(path, "rb").read())
    assert b[:8] == b"LOAMSPLT" and b[-8:] == b"LOAMSPLE", "not a split"
    foot = len(b) - 32
    dir_off, dir_len = struct.unpack_from("<QQ", b, foot)
    count = struct.unpack_from("<I", b, dir_off)[0]
    entries = {}
    for i in range(count):
        e = dir_off + 4 + 32 * i
        kind, field, off, length, crc = struct.unpack_from("<IIQQI", b, e)
        entries[kind] = (e, off, length)
    e_idx, idx_off, idx_len = entries[8]      # STORED_INDEX
    nblocks, codec = struct.unpack_from("<II", b, idx_off)
    assert codec == 0, "the split's stored blocks are compressed: use compression = 'none'"
    first_doc, docs, off, length, raw_len, crc = struct.unpack_from("<IIQIII", b, idx_off + 8)
    e_blk, blk_off, _ = entries[9]             # STORED_BLOCKS
    start = blk_off + off
    block = b[start:start + length]
    colon = block.index(b":")                  # the first document's first member
    block[colon:colon + 1] = b"#"
    b[start:start + length] = block
    struct.pack_into("<I", b, idx_off + 8 + 24, crc32c(block))
    for e, off2, length2 in (entries[8], entries[9]):
        struct.pack_into("<I", b, e + 24, crc32c(b[off2:off2 + length2]))
    struct.pack_into("<I", b, foot + 16, crc32c(b[dir_off:dir_off + dir_len]))
    struct.pack_into("<I", b, foot + 20, crc32c(b[foot:foot + 20]))
    open(path, "wb").write(b)


def directory(b, magic_end):
    assert b[-8:] == magic_end, "not the expected file"
    foot = len(b) - 32
    dir_off, dir_len = struct.unpack_from("<QQ", b, foot)
    count = struct.unpack_from("<I", b, dir_off)[0]
    entries = {}
    for i in range(count):
        e = dir_off + 4 + 32 * i
        kind, _, off, length, crc = struct.unpack_from("<IIQQI", b, e)
        entries[kind] = (e, off, length)
    return foot, dir_off, dir_len, entries


def reseal(b, foot, dir_off, dir_len, entries, kinds):
    for k in kinds:
        e, off, length = entries[k]
        struct.pack_into("<I", b, e + 24, crc32c(b[off:off + length]))
    struct.pack_into("<I", b, foot + 16, crc32c(b[dir_off:dir_off + dir_len]))
    struct.pack_into("<I", b, foot + 20, crc32c(b[foot:foot + 20]))


def graph_props(path):
    b = bytearray(open(path, "rb").read())
    foot, dir_off, dir_len, entries = directory(b, b"LOAMSGSE")
    _, idx_off, _ = entries[4]                 # NODE_INDEX
    _, blk_sec, _ = entries[1]                 # NODE_BLOCKS
    off, length, crc = struct.unpack_from("<QII", b, idx_off + 16)
    start = off if crc32c(b[off:off + length]) == crc else blk_sec + off
    assert crc32c(b[start:start + length]) == crc, "cannot find the first node block"
    block = b[start:start + length]
    colon = block.index(b":", block.index(b'{"'))
    block[colon:colon + 1] = b"#"
    b[start:start + length] = block
    struct.pack_into("<I", b, idx_off + 16 + 12, crc32c(block))
    reseal(b, foot, dir_off, dir_len, entries, (4, 1))
    open(path, "wb").write(b)


def main():
    what, path = sys.argv[1], sys.argv[2]
    if what == "cut":
        data = open(path, "rb").read()
        open(path, "wb").write(data[:len(data) // 2])
    elif what == "flip":
        data = bytearray(open(path, "rb").read())
        data[int(sys.argv[3])] ^= 0xFF
        open(path, "wb").write(data)
    elif what == "split-doc":
        split_doc(path)
    elif what == "graph-props":
        graph_props(path)
    else:
        sys.exit(__doc__)


main()
