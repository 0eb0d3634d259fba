// The libnl 3 headers netpath uses, plus small inline wrappers for what Swift 6 cannot import:
// variadic or macro-only APIs, and headers Glibc's module map leaves out.
#ifndef NETPATH_CNETLINK_SHIM_H
#define NETPATH_CNETLINK_SHIM_H

#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/addr.h>
#include <netlink/errno.h>
#include <netlink/object.h>
#include <netlink/socket.h>
#include <netlink/route/rtnl.h>
#include <netlink/route/link.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/route/nexthop.h>

#include <linux/rtnetlink.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/netlink.h>

#include <errno.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

// setns(2) and CLONE_NEWNET are declared by <sched.h> only under _GNU_SOURCE, and defining that
// here changes fd_set's layout so this module no longer agrees with Swift's Glibc module.
// Declare the one prototype instead (glibc >= 2.14 exports it).
extern int setns(int fd, int nstype);

/// `setns(2)`: move the calling thread into another namespace.
static inline int np_setns(int fd, int nstype) { return setns(fd, nstype); }

/// `CLONE_NEWNET` from <linux/sched.h>.
static inline int np_clone_newnet(void) { return 0x40000000; }

/// `eventfd(2)`: `sys/eventfd.h` is not in Glibc's module map.
static inline int np_eventfd(unsigned int initval, int flags) { return eventfd(initval, flags); }
static inline int np_efd_cloexec(void) { return EFD_CLOEXEC; }
static inline int np_efd_nonblock(void) { return EFD_NONBLOCK; }

/// `SO_RCVBUFFORCE` lets root lift the receive buffer above `net.core.rmem_max`.
static inline int np_so_rcvbufforce(void) { return SO_RCVBUFFORCE; }

/// The netlink header of a message (macro-free access for Swift).
static inline unsigned short np_msg_type(struct nl_msg *msg) { return nlmsg_hdr(msg)->nlmsg_type; }
static inline unsigned short np_msg_flags(struct nl_msg *msg) { return nlmsg_hdr(msg)->nlmsg_flags; }

/// The `ifi_family` byte as it came off the wire: libnl rewrites the object's family for some
/// link messages, and bridge-port notifications (AF_BRIDGE) must not be mistaken for links.
static inline int np_link_wire_family(struct nl_msg *msg) {
    struct nlmsghdr *nlh = nlmsg_hdr(msg);
    if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg))) return -1;
    return ((struct ifinfomsg *)NLMSG_DATA(nlh))->ifi_family;
}

/// What netpath reads from a link message (RTM_NEWLINK / RTM_DELLINK).
struct np_link {
    int index;
    unsigned int flags;
    unsigned short arptype;
    unsigned char operstate;
    unsigned int mtu;
    char name[IFNAMSIZ];
    char kind[32];
    unsigned char address[32];
    int address_length;
};

/// Parses a link message with libnl's attribute API (`nlmsg_parse`, `nla_parse_nested`).
///
/// Why not `nl_msg_parse`: for a link it looks up the cache operations by message type, builds a
/// full `rtnl_link` (statistics, every address family's and the link kind's own parsers, locks
/// around the kind registry) that netpath reads eight fields of and frees. That was most of the
/// engine's time between the kernel's message and the snapshot on a carrier change. The policy
/// makes libnl check each attribute's length before it is read.
/// Returns 0, or a negative libnl error for a malformed message.
static inline int np_parse_link(struct nl_msg *msg, struct np_link *out) {
    static struct nla_policy policy[IFLA_MAX + 1] = {
        [IFLA_IFNAME] = {.type = NLA_STRING, .maxlen = IFNAMSIZ},
        [IFLA_MTU] = {.type = NLA_U32},
        [IFLA_OPERSTATE] = {.type = NLA_U8},
        [IFLA_LINKINFO] = {.type = NLA_NESTED},
    };
    static struct nla_policy info_policy[IFLA_INFO_MAX + 1] = {
        [IFLA_INFO_KIND] = {.type = NLA_STRING},
    };
    struct nlmsghdr *nlh = nlmsg_hdr(msg);
    struct nlattr *tb[IFLA_MAX + 1];
    int err = nlmsg_parse(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX, policy);
    if (err < 0) return err;
    const struct ifinfomsg *ifi = nlmsg_data(nlh);
    memset(out, 0, sizeof *out);
    out->index = ifi->ifi_index;
    out->flags = ifi->ifi_flags;
    out->arptype = ifi->ifi_type;
    if (tb[IFLA_IFNAME]) nla_strlcpy(out->name, tb[IFLA_IFNAME], sizeof out->name);
    if (tb[IFLA_MTU]) out->mtu = nla_get_u32(tb[IFLA_MTU]);
    if (tb[IFLA_OPERSTATE]) out->operstate = nla_get_u8(tb[IFLA_OPERSTATE]);
    if (tb[IFLA_ADDRESS]) {
        int length = nla_len(tb[IFLA_ADDRESS]);
        if (length > (int)sizeof out->address) length = (int)sizeof out->address;
        if (length > 0) memcpy(out->address, nla_data(tb[IFLA_ADDRESS]), (size_t)length);
        out->address_length = length > 0 ? length : 0;
    }
    if (tb[IFLA_LINKINFO]) {
        struct nlattr *info[IFLA_INFO_MAX + 1];
        if (nla_parse_nested(info, IFLA_INFO_MAX, tb[IFLA_LINKINFO], info_policy) == 0 && info[IFLA_INFO_KIND])
            nla_strlcpy(out->kind, info[IFLA_INFO_KIND], sizeof out->kind);
    }
    return 0;
}

#endif
